package views

// ErrorView describes an error page.
type ErrorView struct {
	Status  int
	Title   string
	Message string
}
