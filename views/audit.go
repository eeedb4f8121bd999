package views

import "encoding/json"

func detailsText(d map[string]any) string {
	if len(d) == 0 {
		return ""
	}
	b, err := json.Marshal(d)
	if err != nil {
		return "(unreadable)"
	}
	return string(b)
}
