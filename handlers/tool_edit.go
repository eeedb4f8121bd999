package handlers

import (
	"context"
	"database/sql"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/agent/catalog"
	"github.com/wardenhq/warden/agent/tools"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/store"
	"github.com/wardenhq/warden/views"
)

// ToolEditForm shows a tool's definition for editing.
func ToolEditForm(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		if err := requireAllTenants(CurrentPrincipal(c), catalogChange); err != nil {
			return err
		}
		t, err := loadTool(ctx, st.Read(), c.Param("name"))
		if err != nil {
			return err
		}
		return renderToolForm(c, st, http.StatusOK, views.ToolFormView{Form: toolForm(t), Enabled: t.Enabled})
	}
}

// ToolUpdate saves a tool's definition. Its switch is left as it is: it
// has its own buttons and audit verbs.
func ToolUpdate(st AdminStore) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		user := CurrentPrincipal(c)
		if err := requireAllTenants(user, catalogChange); err != nil {
			return err
		}
		current, err := loadTool(ctx, st.Read(), c.Param("name"))
		if err != nil {
			return err
		}
		form, t, errs := parseToolForm(ctx, c, st, current.Name)
		if len(errs) > 0 {
			return renderToolForm(c, st, http.StatusUnprocessableEntity, views.ToolFormView{Form: form, Enabled: current.Enabled, Errors: errs})
		}
		var changed []string
		err = st.Transact(ctx, func(tx *sql.Tx) error {
			stored, err := catalog.Get(ctx, tx, current.Name)
			if err != nil {
				return err
			}
			t.Enabled = stored.Enabled
			if changed = toolChanges(stored, t); len(changed) == 0 {
				return nil
			}
			if err := catalog.Upsert(ctx, tx, t); err != nil {
				return err
			}
			details := toolAuditDetails(t)
			details["changed"] = changed
			_, err = audit.Append(ctx, tx, audit.Event{
				Actor:   principalActor(user),
				Verb:    "tool.update",
				Subject: audit.Subject{Type: "tool", ID: t.Name},
				Details: details,
			})
			return err
		})
		if err != nil {
			return err
		}
		done := "updated"
		if len(changed) == 0 {
			done = "unchanged"
		}
		return seeOther(c, "/tools?done="+done)
	}
}

// loadTool loads a catalog entry, or answers 404.
func loadTool(ctx context.Context, q store.Querier, name string) (tools.Tool, error) {
	t, err := catalog.Get(ctx, q, name)
	if errors.Is(err, store.ErrNotFound) {
		return tools.Tool{}, echo.NewHTTPError(http.StatusNotFound, "There is no tool "+name+" in the catalog.")
	}
	return t, err
}
