package redact

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
)

// NewHandler returns a handler that redacts every record with r and then
// passes it to next: the message, and every attribute, in groups and
// nested groups, added on the record or with WithAttrs. LogValuer values
// are resolved first; error and fmt.Stringer values are redacted as
// their text; other values as Value does. An attribute whose key (or
// group name) means secret or personal data has its value replaced whole,
// keeping the kind: slog.String("email", "a@b.example") logs
// email=[email:...]. Keys are redacted as free text too.
func NewHandler(next slog.Handler, r *Redactor) slog.Handler {
	return &handler{next: next, r: r}
}

type handler struct {
	next slog.Handler
	r    *Redactor
	kind string // the kind of an open group whose name is sensitive
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// NewContext returns ctx carrying r. A record logged with ctx through
// NewHandler is redacted by r rather than the handler's own redactor: a
// tenant's (its allow-list, Keeping) or a journey's (the values its
// request declared personal, Marking). Attributes added earlier with
// WithAttrs were redacted when they were added, by the handler's own.
func NewContext(ctx context.Context, r *Redactor) context.Context {
	return context.WithValue(ctx, ctxKey{}, r)
}

// FromContext is the Redactor NewContext put in ctx, if any.
func FromContext(ctx context.Context) (*Redactor, bool) {
	r, ok := ctx.Value(ctxKey{}).(*Redactor)
	return r, ok && r != nil
}

type ctxKey struct{}

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	if r, ok := FromContext(ctx); ok && r != h.r {
		hh := *h
		hh.r = r
		h = &hh
	}
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	attrs := make([]slog.Attr, 0, rec.NumAttrs())
	rec.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, h.attr(a, h.kind))
		return true
	})
	out.AddAttrs(attrs...)
	return h.next.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a, h.kind)
	}
	return &handler{next: h.next.WithAttrs(out), r: h.r, kind: h.kind}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	kind := h.kind
	if k := h.r.fieldKind(name); k != "" {
		kind = k
	}
	return &handler{next: h.next.WithGroup(h.r.String(name)), r: h.r, kind: kind}
}

func (h *handler) attr(a slog.Attr, kind string) slog.Attr {
	if k := h.r.fieldKind(a.Key); k != "" {
		kind = k
	}
	return slog.Attr{Key: h.r.String(a.Key), Value: h.value(a.Value.Resolve(), kind)}
}

func (h *handler) value(v slog.Value, kind string) slog.Value {
	r := h.r
	switch v.Kind() {
	case slog.KindGroup:
		as := v.Group()
		out := make([]slog.Attr, len(as))
		for i, a := range as {
			out[i] = h.attr(a, kind)
		}
		return slog.GroupValue(out...)
	case slog.KindString:
		return slog.StringValue(r.leaf(kind, v.String()))
	case slog.KindInt64:
		return h.num(kind, strconv.FormatInt(v.Int64(), 10), v)
	case slog.KindUint64:
		return h.num(kind, strconv.FormatUint(v.Uint64(), 10), v)
	case slog.KindFloat64:
		return h.num(kind, strconv.FormatFloat(v.Float64(), 'f', -1, 64), v)
	case slog.KindBool:
		return v
	case slog.KindDuration, slog.KindTime:
		if kind != "" {
			return slog.StringValue(r.Token(kind, v.String()))
		}
		return v
	}
	switch x := v.Any().(type) {
	case nil:
		return v
	case error:
		return slog.StringValue(r.leaf(kind, x.Error()))
	case json.Marshaler, encoding.TextMarshaler:
	case fmt.Stringer:
		return slog.StringValue(r.leaf(kind, x.String()))
	}
	return slog.AnyValue(r.value(reflect.ValueOf(v.Any()), kind, 0))
}

func (h *handler) num(kind, s string, v slog.Value) slog.Value {
	if kind != "" {
		return slog.StringValue(h.r.Token(kind, s))
	}
	if red := h.r.number(s, nil); red != s {
		return slog.StringValue(red)
	}
	return v
}
