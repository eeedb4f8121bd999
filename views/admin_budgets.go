package views

import (
	"time"

	"github.com/wardenhq/warden/agent/budget"
	"github.com/wardenhq/warden/agent/runtime"
	"github.com/wardenhq/warden/store"
)

// BudgetsView shows the budget of every tenant in scope.
type BudgetsView struct {
	Cards  []BudgetCard
	Notice string
}

// BudgetCard is one tenant's budget, its form and its top spenders.
type BudgetCard struct {
	Tenant      store.Tenant
	Budget      *budget.Budget // nil: none set, nothing is admitted
	PeriodStart time.Time      // start of the current period
	Top         []runtime.Journey
	Form        BudgetForm
	Errors      FieldErrors
}

// BudgetForm is what the budget form posts.
type BudgetForm struct {
	Period       string
	Limit        string // currency units, "250.00"
	AlertPercent string
}

var budgetPeriods = []struct{ Value, Label string }{
	{budget.Day, "Day"},
	{budget.Month, "Month"},
	{budget.Total, "Total"},
}
