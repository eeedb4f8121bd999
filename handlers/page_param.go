package handlers

import (
	"fmt"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/wardenhq/warden/problem"
)

// maxPage is the highest page number a console list accepts: far beyond
// any real list, and low enough that (page-1)*pageSize, the offset every
// list computes from it, cannot overflow.
const maxPage = 1_000_000

// pageParam reads a list's "page" query parameter: 1 when it is absent,
// and a 400 naming the allowed range when it is not a whole number from 1
// to maxPage.
func pageParam(c echo.Context) (int, error) {
	raw := c.QueryParam("page")
	if raw == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > maxPage {
		return 0, problem.Invalid("bad_request", fmt.Sprintf("The page parameter must be a whole number from 1 to %d.", maxPage))
	}
	return n, nil
}
