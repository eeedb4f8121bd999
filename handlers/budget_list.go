package handlers

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/changes"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/platform/identity"
	"github.com/wardenhq/warden/platform/store"
	"github.com/wardenhq/warden/tenants"
	"github.com/wardenhq/warden/views"
)

const topSpenders = 5

var budgetNotices = map[string]string{
	"saved":     "Budget saved.",
	"unchanged": "That is the current budget; nothing changed.",
}

// BudgetList shows the budget of each tenant in the admin's scope: what is
// spent and reserved, what remains, and the journeys that cost the most.
func (h *Console) BudgetList(c echo.Context) error {
	return renderBudgets(c, h.DB, http.StatusOK, doneNotice(c, budgetNotices), "", views.BudgetForm{}, nil)
}

// renderBudgets renders every card; the card of tenantID, when given,
// shows form and errs instead of the stored values.
func renderBudgets(c echo.Context, st *store.DB, status int, note, tenantID string, form views.BudgetForm, errs views.FieldErrors) error {
	cards, err := budgetCards(c.Request().Context(), st, CurrentPrincipal(c), time.Now())
	if err != nil {
		return err
	}
	for i := range cards {
		if cards[i].Tenant.ID == tenantID {
			cards[i].Form, cards[i].Errors = form, errs
		}
	}
	pending, _, err := changes.Queue(c.Request().Context(), st.Read(), *CurrentPrincipal(c), time.Now())
	if err != nil {
		return err
	}
	v := views.BudgetsView{Cards: cards, Notice: note}
	for _, ch := range pending {
		if ch.Kind == changes.BudgetLimit {
			v.Pending = append(v.Pending, ch)
		}
	}
	page := PageFor(c, "Budgets")
	return Render(c, status, page, views.BudgetList(page, v))
}

func budgetCards(ctx context.Context, st *store.DB, user *identity.Principal, now time.Time) ([]views.BudgetCard, error) {
	tenantList, err := tenants.List(ctx, st, tenantFilter(user))
	if err != nil {
		return nil, err
	}
	cards := make([]views.BudgetCard, 0, len(tenantList))
	for _, t := range tenantList {
		card := views.BudgetCard{Tenant: t, Form: views.BudgetForm{Period: budgets.Month, AlertPercent: "80"}}
		b, err := budgets.Get(ctx, st.Read(), t.ID)
		switch {
		case errors.Is(err, budgets.ErrNoBudget):
		case err != nil:
			return nil, err
		default:
			card.Budget = &b
			card.Form = views.BudgetForm{Period: b.Period, Limit: views.MoneyInput(b.LimitMicros), AlertPercent: strconv.Itoa(b.AlertPercent)}
			card.PeriodStart = budgets.PeriodStart(b.Period, now)
			if card.Top, err = journeys.TopSpenders(ctx, st.Read(), t.ID, card.PeriodStart, topSpenders); err != nil {
				return nil, err
			}
			spend, err := budgets.SpendSince(ctx, st.Read(), t.ID, card.PeriodStart)
			if err != nil {
				return nil, err
			}
			card.Spend = views.BudgetSpend{Spend: spend, Other: b.SpentMicros - spend.Journeys - spend.Actions - spend.Models}
		}
		cards = append(cards, card)
	}
	return cards, nil
}
