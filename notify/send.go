package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/wneessen/go-mail"

	"github.com/wardenhq/warden/platform/sign"
	"github.com/wardenhq/warden/tools"
)

// MessageIDHeader carries the stable message id on every HTTP channel.
const MessageIDHeader = "X-Warden-Message-Id"

// link is the absolute URL of a console path.
func (s *Service) link(path string) string {
	if path == "" {
		return ""
	}
	return strings.TrimRight(s.o.BaseURL, "/") + path
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// send renders m for ch's kind and sends it once. Errors are *tools.Error:
// Transient (the network, a timeout, 5xx, 408, 429, a temporary SMTP
// failure) or Terminal (the receiver refused the message).
func (s *Service) send(ctx context.Context, ch Channel, sec Secret, m Message) error {
	switch ch.Kind {
	case Email:
		return s.sendEmail(ctx, ch.Config, sec, m)
	case Slack:
		return s.postJSON(ctx, sec.URL, s.slackPayload(m), m.ID, nil)
	case Teams:
		return s.postJSON(ctx, sec.URL, s.teamsPayload(m), m.ID, nil)
	case Webhook:
		body, err := json.Marshal(s.webhookPayload(m))
		if err != nil {
			return &tools.Error{Kind: tools.Terminal, Reason: "render message", Err: err}
		}
		return s.post(ctx, sec.URL, body, m.ID, map[string]string{sign.Header: sign.Sign([]string{sec.SigningSecret}, s.o.Now(), body)})
	case Alertmanager:
		return s.postJSON(ctx, strings.TrimRight(sec.URL, "/")+"/api/v2/alerts", s.alertmanagerPayload(m), m.ID, nil)
	case PagerDuty:
		return s.postJSON(ctx, sec.URL, s.pagerDutyPayload(sec.RoutingKey, m), m.ID, nil)
	}
	return &tools.Error{Kind: tools.Terminal, Reason: "unknown channel kind " + ch.Kind}
}

func (s *Service) postJSON(ctx context.Context, target string, payload any, id string, headers map[string]string) error {
	body, err := json.Marshal(payload)
	if err != nil {
		return &tools.Error{Kind: tools.Terminal, Reason: "render message", Err: err}
	}
	return s.post(ctx, target, body, id, headers)
}

// post sends body to target through the egress policy. The URL never
// appears in an error: a webhook's URL is its credential.
func (s *Service) post(ctx context.Context, target string, body []byte, id string, headers map[string]string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return &tools.Error{Kind: tools.Terminal, Reason: "bad URL"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Warden-Notify/1")
	req.Header.Set(MessageIDHeader, id)
	req.Header.Set("Idempotency-Key", id)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return &tools.Error{Kind: tools.Transient, Reason: "no answer from " + hostOf(target), Err: err}
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	reason := fmt.Sprintf("%s answered %s", hostOf(target), resp.Status)
	if t := strings.TrimSpace(string(snippet)); t != "" {
		reason += ": " + strings.ToValidUTF8(t, "")
	}
	kind := tools.Terminal
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout {
		kind = tools.Transient
	}
	return &tools.Error{Kind: kind, Reason: reason}
}

// text is the message as plain text: e-mail's body.
func (s *Service) text(m Message) string {
	var b strings.Builder
	b.WriteString(m.Title + "\n\n")
	if m.Summary != "" && m.Summary != strings.TrimPrefix(m.Title, "Approval needed: ") {
		b.WriteString(m.Summary + "\n\n")
	}
	for _, f := range m.Fields {
		fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Value)
	}
	if m.Alert != nil && m.Alert.Runbook != "" {
		fmt.Fprintf(&b, "Runbook: %s\n", s.link(m.Alert.Runbook))
	}
	fmt.Fprintf(&b, "\nOpen in Warden: %s\n\n-- \nWarden notification %s\n", s.link(m.Link), m.ID)
	return b.String()
}

func (s *Service) sendEmail(ctx context.Context, c Config, sec Secret, m Message) error {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.o.TLSConfig != nil {
		tlsConf = s.o.TLSConfig.Clone()
	}
	tlsConf.ServerName = c.Host
	dial := s.dial()
	opts := []mail.Option{mail.WithPort(c.Port), mail.WithTimeout(s.o.Timeout), mail.WithTLSConfig(tlsConf)}
	if c.TLS == "tls" {
		// TLS from the first byte (port 465). go-mail dials TLS itself
		// only with its own dialer; with the egress policy's it expects
		// the dialer to: the TLS client is wrapped here.
		opts = append(opts, mail.WithSSL(), mail.WithDialContextFunc(func(ctx context.Context, network, address string) (net.Conn, error) {
			conn, err := dial(ctx, network, address)
			if err != nil {
				return nil, err
			}
			tc := tls.Client(conn, tlsConf)
			if err := tc.HandshakeContext(ctx); err != nil {
				conn.Close()
				return nil, err
			}
			return tc, nil
		}))
	} else {
		opts = append(opts, mail.WithDialContextFunc(dial))
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	}
	switch c.Auth {
	case "plain":
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthPlain), mail.WithUsername(c.Username), mail.WithPassword(sec.Password))
	case "login":
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthLogin), mail.WithUsername(c.Username), mail.WithPassword(sec.Password))
	}
	client, err := mail.NewClient(c.Host, opts...)
	if err != nil {
		return &tools.Error{Kind: tools.Terminal, Reason: "SMTP settings", Err: err}
	}
	msg := mail.NewMsg()
	if err := msg.From(c.From); err != nil {
		return &tools.Error{Kind: tools.Terminal, Reason: "sender", Err: err}
	}
	to := m.To
	if !m.PeopleOnly {
		to = append(slices.Clone(c.To), m.To...)
	}
	if err := msg.To(to...); err != nil {
		return &tools.Error{Kind: tools.Terminal, Reason: "recipients", Err: err}
	}
	msg.Subject(m.Title)
	msg.SetMessageIDWithValue(m.ID + "@warden")
	msg.SetGenHeader(MessageIDHeader, m.ID)
	msg.SetDateWithValue(m.At)
	msg.SetBulk()
	msg.SetBodyString(mail.TypeTextPlain, s.text(m))
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		var se *mail.SendError
		if errors.As(err, &se) && !se.IsTemp() && (se.Reason == mail.ErrSMTPMailFrom || se.Reason == mail.ErrSMTPRcptTo || se.Reason == mail.ErrSMTPData || se.Reason == mail.ErrSMTPDataClose) {
			return &tools.Error{Kind: tools.Terminal, Reason: "the SMTP server refused the message", Err: err}
		}
		return &tools.Error{Kind: tools.Transient, Reason: "SMTP", Err: err}
	}
	return nil
}

// slackEscape escapes what Slack's mrkdwn reads as markup.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// slackPayload is the message in Block Kit: a header, its fields, a
// button to the console and the message id in the context line. text is
// the notification's fallback.
func (s *Service) slackPayload(m Message) map[string]any {
	blocks := []map[string]any{
		{"type": "header", "text": map[string]any{"type": "plain_text", "text": clipRunes(m.Title, 150)}},
	}
	if m.Summary != "" {
		blocks = append(blocks, map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": slackEscape(clipRunes(m.Summary, 2900))}})
	}
	if len(m.Fields) > 0 {
		var fields []map[string]any
		for i, f := range m.Fields {
			if i == 10 {
				break
			}
			fields = append(fields, map[string]any{"type": "mrkdwn", "text": "*" + slackEscape(f.Name) + "*\n" + slackEscape(clipRunes(f.Value, 1900))})
		}
		blocks = append(blocks, map[string]any{"type": "section", "fields": fields})
	}
	buttons := []map[string]any{{"type": "button", "text": map[string]any{"type": "plain_text", "text": "Open in Warden"}, "url": s.link(m.Link), "action_id": "open"}}
	if m.Alert != nil && m.Alert.Runbook != "" {
		buttons = append(buttons, map[string]any{"type": "button", "text": map[string]any{"type": "plain_text", "text": "Runbook"}, "url": s.link(m.Alert.Runbook), "action_id": "runbook"})
	}
	blocks = append(blocks, map[string]any{"type": "actions", "elements": buttons},
		map[string]any{"type": "context", "elements": []map[string]any{{"type": "mrkdwn", "text": "Warden · message " + m.ID}}})
	return map[string]any{"text": m.Title, "blocks": blocks}
}

// teamsPayload is the message as a Teams workflow webhook takes it: a
// message with one Adaptive Card attachment.
func (s *Service) teamsPayload(m Message) map[string]any {
	body := []map[string]any{{"type": "TextBlock", "text": m.Title, "weight": "Bolder", "size": "Medium", "wrap": true}}
	if m.Summary != "" {
		body = append(body, map[string]any{"type": "TextBlock", "text": m.Summary, "wrap": true})
	}
	if len(m.Fields) > 0 {
		var facts []map[string]any
		for _, f := range m.Fields {
			facts = append(facts, map[string]any{"title": f.Name, "value": f.Value})
		}
		body = append(body, map[string]any{"type": "FactSet", "facts": facts})
	}
	body = append(body, map[string]any{"type": "TextBlock", "text": "Warden · message " + m.ID, "isSubtle": true, "size": "Small", "wrap": true})
	actions := []map[string]any{{"type": "Action.OpenUrl", "title": "Open in Warden", "url": s.link(m.Link)}}
	if m.Alert != nil && m.Alert.Runbook != "" {
		actions = append(actions, map[string]any{"type": "Action.OpenUrl", "title": "Runbook", "url": s.link(m.Alert.Runbook)})
	}
	return map[string]any{
		"type": "message",
		"attachments": []map[string]any{{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"contentUrl":  nil,
			"content": map[string]any{
				"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
				"type":    "AdaptiveCard",
				"version": "1.4",
				"body":    body,
				"actions": actions,
			},
		}},
	}
}

// WebhookPayload is the generic webhook's body (docs/notifications.md).
type WebhookPayload struct {
	ID         string     `json:"id"`
	Event      string     `json:"event"`
	Title      string     `json:"title"`
	Summary    string     `json:"summary,omitempty"`
	Tenant     string     `json:"tenant,omitempty"`
	Fields     []Field    `json:"fields,omitempty"`
	URL        string     `json:"url"`
	Alert      *AlertPart `json:"alert,omitempty"`
	RunbookURL string     `json:"runbook_url,omitempty"`
	Timestamp  time.Time  `json:"timestamp"`
}

func (s *Service) webhookPayload(m Message) WebhookPayload {
	p := WebhookPayload{ID: m.ID, Event: m.Event, Title: m.Title, Summary: m.Summary, Tenant: m.Tenant, Fields: m.Fields,
		URL: s.link(m.Link), Alert: m.Alert, Timestamp: m.At.UTC()}
	if m.Alert != nil {
		p.RunbookURL = s.link(m.Alert.Runbook)
	}
	return p
}

// alertmanagerPayload is one alert for POST /api/v2/alerts. A firing
// alert ends in a day unless Warden resolves it (Warden sends it once,
// where Prometheus would send it again and again); a resolved one ends
// when it resolved. The labels identify it: the same labels resolve it.
func (s *Service) alertmanagerPayload(m Message) []map[string]any {
	a := m.Alert
	if a == nil {
		// Not an alert (a pending action routed to Alertmanager): an
		// alert of its own that ends in a day.
		a = &AlertPart{DedupKey: "warden/" + m.Event + "/" + m.ID, Status: "firing", Severity: "info", Kind: strings.ReplaceAll(m.Event, ".", "_"), Subject: m.ID, StartsAt: m.At}
	}
	labels := map[string]string{"alertname": "Warden_" + a.Kind, "severity": a.Severity, "source": "warden",
		"subject": a.Subject, "dedup_key": a.DedupKey}
	if m.Tenant != "" {
		labels["tenant"] = m.Tenant
	}
	desc := make([]string, 0, len(m.Fields))
	for _, f := range m.Fields {
		desc = append(desc, f.Name+": "+f.Value)
	}
	annotations := map[string]string{"summary": m.Summary, "description": strings.Join(desc, "\n"), "warden_url": s.link(m.Link)}
	if a.Runbook != "" {
		annotations["runbook_url"] = s.link(a.Runbook)
	}
	ends := a.StartsAt.Add(24 * time.Hour)
	if ends.Before(m.At) {
		ends = m.At.Add(24 * time.Hour)
	}
	if a.EndsAt != nil {
		ends = *a.EndsAt
	}
	return []map[string]any{{"labels": labels, "annotations": annotations, "startsAt": a.StartsAt.UTC().Format(time.RFC3339Nano),
		"endsAt": ends.UTC().Format(time.RFC3339Nano), "generatorURL": s.link(m.Link)}}
}

// pagerDutySeverity maps Warden's severities onto PagerDuty's.
func pagerDutySeverity(s string) string {
	switch s {
	case "critical", "warning", "info":
		return s
	}
	return "error"
}

// pagerDutyPayload is an Events API v2 event: a trigger, or a resolve of
// the same dedup key.
func (s *Service) pagerDutyPayload(routingKey string, m Message) map[string]any {
	dedup, severity, component, class := m.ID, "info", "", m.Event
	if a := m.Alert; a != nil {
		dedup, severity, component, class = a.DedupKey, a.Severity, a.Subject, a.Kind
		if a.Status == "resolved" {
			return map[string]any{"routing_key": routingKey, "event_action": "resolve", "dedup_key": dedup}
		}
	}
	details := map[string]string{}
	for _, f := range m.Fields {
		details[f.Name] = f.Value
	}
	links := []map[string]string{{"href": s.link(m.Link), "text": "Open in Warden"}}
	if m.Alert != nil && m.Alert.Runbook != "" {
		links = append(links, map[string]string{"href": s.link(m.Alert.Runbook), "text": "Runbook"})
	}
	payload := map[string]any{"summary": clipRunes(m.Title, 1024), "source": "warden", "severity": pagerDutySeverity(severity),
		"timestamp": m.At.UTC().Format(time.RFC3339), "class": class, "custom_details": details}
	if component != "" {
		payload["component"] = component
	}
	if m.Tenant != "" {
		payload["group"] = m.Tenant
	}
	return map[string]any{"routing_key": routingKey, "event_action": "trigger", "dedup_key": dedup, "payload": payload,
		"links": links, "client": "Warden", "client_url": s.link(m.Link)}
}
