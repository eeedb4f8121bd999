package mcpservers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A forwarded low-impact call whose client asked for progress (a
// progressToken) passes a token of Warden's to the upstream, unique to
// the call: the upstream session is shared by many calls and its
// client's progress handler by all of them, so the upstream's
// notifications/progress are routed back by that token to the client's
// request, under the client's own token.

type relayKey struct{}

// progressRelay tells a forwarded call's client one of the upstream's
// progress notifications.
type progressRelay func(*mcp.ProgressNotificationParams)

// withRelay returns ctx carrying the relay of a call whose client asked
// for progress; Execute finds it there (it passes the guard).
func withRelay(ctx context.Context, r progressRelay) context.Context {
	return context.WithValue(ctx, relayKey{}, r)
}

// relayFor is the relay that forward puts in a call's context when the
// client's request carries a progress token: the upstream's progress,
// sent to the client's request under the client's token.
func relayFor(ctx context.Context, req *mcp.CallToolRequest) progressRelay {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	return func(p *mcp.ProgressNotificationParams) {
		// A client that cannot be told still gets its answer.
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}

// relayed is one call's registration: its upstream session, its relay,
// and how many notifications were relayed.
type relayed struct {
	session *mcp.ClientSession
	relay   progressRelay
	mu      sync.Mutex // one notification at a time, in order
	count   atomic.Int64
}

// progressToken is a fresh token for one upstream call.
func progressToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "warden-" + hex.EncodeToString(b)
}

// onProgress is the upstream clients' progress handler: a notification
// for a registered token, on that call's session, goes to its client.
func (g *Gateway) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	v, ok := g.relays.Load(tok)
	if !ok {
		return
	}
	r := v.(*relayed)
	if r.session != req.Session {
		return
	}
	r.mu.Lock()
	r.relay(req.Params)
	r.mu.Unlock()
	r.count.Add(1)
}

// progressMarker is what an upstream's progress notification contains.
var progressMarker = []byte(`"notifications/progress"`)

// progressCounter counts the progress notifications in the body of a
// call's answer (an SSE stream) as the SDK reads it. The SDK hands
// notifications to its handler in order, after the call may have
// returned: the call waits until as many were relayed (settle).
type progressCounter struct {
	seen  atomic.Int64
	carry []byte // the end of the last read, for a marker across reads
}

func (c *progressCounter) wrap(body io.ReadCloser) io.ReadCloser {
	return &countingBody{ReadCloser: body, c: c}
}

type countingBody struct {
	io.ReadCloser
	c *progressCounter
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		buf := append(b.c.carry, p[:n]...)
		b.c.seen.Add(int64(bytes.Count(buf, progressMarker)))
		keep := min(len(progressMarker)-1, len(buf))
		// A marker counted is never kept whole: keep < its length.
		b.c.carry = append(b.c.carry[:0], buf[len(buf)-keep:]...)
	}
	return n, err
}

// settleFor bounds how long a call waits for its progress to be relayed.
const settleFor = 250 * time.Millisecond

// settle waits until every progress notification the upstream sent in
// the call's answer was relayed, at most settleFor or until ctx ends.
func settle(ctx context.Context, c *progressCounter, r *relayed) {
	deadline := time.Now().Add(settleFor)
	for r.count.Load() < c.seen.Load() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
}
