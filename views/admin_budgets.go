package views

import (
	"github.com/wardenhq/warden/changes"
	"time"

	"github.com/wardenhq/warden/budgets"
	"github.com/wardenhq/warden/journeys"
	"github.com/wardenhq/warden/tenants"
)

// BudgetsView shows the budget of every tenant in scope.
type BudgetsView struct {
	Pending []changes.Change // budget changes waiting for a second admin
	Cards   []BudgetCard
	Notice  string
}

// BudgetCard is one tenant's budget, its form and its top spenders.
type BudgetCard struct {
	Tenant      tenants.Tenant
	Budget      *budgets.Budget // nil: none set, nothing is admitted
	PeriodStart time.Time       // start of the current period
	Top         []journeys.Journey
	Spend       BudgetSpend // what the period's spend is made of
	Form        BudgetForm
	Errors      FieldErrors
}

// BudgetSpend itemises a period's spend so the figures add up: journeys,
// actions charged outside any journey (proposed through /v1/actions, or
// reversals), model calls (the chat gateway's and model-driven
// journeys'), and what none accounts for (spend recorded before
// itemisation, or a journey admitted in the previous period and finished
// in this one).
type BudgetSpend struct {
	budgets.Spend       // the running totals of the period (budgets.SpendSince)
	Other         int64 // spent − journeys − actions − model calls; shown when not zero
}

// BudgetForm is what the budget form posts.
type BudgetForm struct {
	Period       string
	Limit        string // currency units, "250.00"
	AlertPercent string
}

var budgetPeriods = []struct{ Value, Label string }{
	{budgets.Day, "Day"},
	{budgets.Month, "Month"},
	{budgets.Total, "Total"},
}
