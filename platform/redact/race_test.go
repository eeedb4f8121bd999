//go:build race

package redact

// raceEnabled: the race detector makes redaction about ten times slower;
// the longest tests read less text under it.
const raceEnabled = true
