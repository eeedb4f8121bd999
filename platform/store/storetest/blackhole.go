package storetest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a TCP proxy in front of the PostgreSQL server that can be
// black-holed: what a dropped network or a firewall that drops packets
// looks like from Warden's side. Connections stay open, nothing answers,
// and new connections are accepted but never answered.
type Proxy struct {
	ln     net.Listener
	target string
	holed  atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

// NewProxy starts a proxy to the server dsn names, closed at cleanup, and
// returns it with dsn pointed at it.
func NewProxy(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := &Proxy{ln: ln, target: u.Host}
	go p.serve()
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

// BlackHole makes the proxy stop forwarding in both directions on every
// connection, open or new. BlackHole(false) lets it forward again on new
// connections and closes the ones it held: bytes swallowed meanwhile are
// gone, so those are dead, and closing them lets their clients notice.
func (p *Proxy) BlackHole(on bool) {
	p.holed.Store(on)
	if on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.track(c)
		go p.handle(c)
	}
}

func (p *Proxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) handle(c net.Conn) {
	if p.holed.Load() {
		_, _ = io.Copy(io.Discard, c)
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.track(up)
	go p.pipe(up, c)
	p.pipe(c, up)
}

// pipe copies from src to dst until the proxy is black-holed; from then
// on it reads and drops.
func (p *Proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.holed.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !p.holed.Load() {
				dst.Close()
			}
			return
		}
	}
}

func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}
