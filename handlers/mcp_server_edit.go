package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/mcpservers"
	"github.com/wardenhq/warden/views"
)

// MCPServerEditForm shows a server's settings to change; its token and
// headers are never shown, only whether it has them and the headers'
// names.
func (h *Console) MCPServerEditForm(c echo.Context) error {
	if err := requireAllTenants(CurrentPrincipal(c), mcpChange); err != nil {
		return err
	}
	ctx := c.Request().Context()
	s, err := mcpservers.Get(ctx, h.DB.Read(), c.Param("name"))
	if err != nil {
		return err
	}
	v := views.MCPServerEditView{Name: s.Name, HasToken: s.HasToken,
		Form: views.MCPServerForm{Name: s.Name, URL: s.URL, Timeout: strconv.FormatInt(s.Timeout.Milliseconds(), 10), Owner: s.Owner}}
	if v.HeaderNames, err = mcpservers.HeaderNames(ctx, h.DB.Read(), h.Sealer, s.Name); err != nil {
		return err
	}
	return renderMCPServerEdit(c, http.StatusOK, v)
}

// MCPServerUpdate saves a server's URL, timeout and owner, and replaces
// its token or extra headers when new ones are typed. Bad input shows the
// form again as typed (but for the secrets) and changes nothing.
func (h *Console) MCPServerUpdate(c echo.Context) error {
	user := CurrentPrincipal(c)
	if err := requireAllTenants(user, mcpChange); err != nil {
		return err
	}
	ctx := c.Request().Context()
	old, err := mcpservers.Get(ctx, h.DB.Read(), c.Param("name"))
	if err != nil {
		return err
	}
	f := views.MCPServerForm{Name: old.Name, URL: strings.TrimSpace(c.FormValue("url")), Timeout: c.FormValue("timeout"), Owner: strings.TrimSpace(c.FormValue("owner"))}
	s := mcpservers.Server{Name: old.Name, URL: f.URL, Owner: f.Owner}
	sec := mcpservers.Secrets{Token: c.FormValue("token"), RemoveToken: c.FormValue("remove_token") != ""}
	errs := views.FieldErrors{}
	if ms, msg := formInt(f.Timeout, "Enter the timeout as a whole number of milliseconds."); msg != "" {
		errs["timeout"] = msg
	} else {
		s.Timeout = time.Duration(ms) * time.Millisecond
	}
	switch typed := c.FormValue("headers"); {
	case strings.TrimSpace(typed) != "":
		if sec.Headers, err = mcpservers.ParseHeaders(typed); err != nil {
			errs["headers"] = err.Error() + "."
		}
	case c.FormValue("remove_headers") != "":
		sec.Headers = map[string]string{}
	}
	for k, msg := range s.Validate() {
		if _, ok := errs[k]; !ok {
			errs[k] = msg
		}
	}
	if len(errs) == 0 {
		changed, err := mcpservers.Edit(ctx, h.DB, h.Sealer, principalActor(user), s, sec)
		invalid, isInvalid := fieldErrors(err)
		switch {
		case isInvalid:
			errs = invalid
		case err != nil:
			return err
		case len(changed) == 0:
			return seeOther(c, "/mcp-servers?done=unchanged")
		default:
			return seeOther(c, "/mcp-servers?done=saved")
		}
	}
	v := views.MCPServerEditView{Name: old.Name, Form: f, HasToken: old.HasToken, Errors: errs}
	v.HeaderNames, _ = mcpservers.HeaderNames(ctx, h.DB.Read(), h.Sealer, old.Name)
	return renderMCPServerEdit(c, http.StatusUnprocessableEntity, v)
}

func renderMCPServerEdit(c echo.Context, status int, v views.MCPServerEditView) error {
	page := PageFor(c, "Edit MCP server "+v.Name)
	page.Active = "/mcp-servers"
	return Render(c, status, page, views.MCPServerEdit(page, v))
}
