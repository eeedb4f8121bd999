// Package egress is Warden's one policy for outbound calls to addresses
// someone else chose: agents' callback URLs and model deployments' base
// URLs. Such a call must not be turned against this host or its network
// (request forgery, SSRF): an address is checked when the connection is
// made, after name resolution, by the dialer's Control function, so a name
// that resolved elsewhere when it was saved (or a moment ago) cannot be
// pointed inside later. Redirects are never followed, and no proxy sits in
// between.
//
//	p := egress.Policy{AllowHost: func(host string) bool { return host == "llm.corp.internal" }}
//	client := &http.Client{Transport: p.Transport(), CheckRedirect: egress.NoRedirects}
//	if err := p.Check(ctx, u.Hostname()); errors.Is(err, egress.ErrInternal) { ... } // an early, clear refusal
//
// The package imports no domain package: callers say which hosts their
// admins allowed.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrInternal refuses a connection to an address inside the network.
var ErrInternal = errors.New("loopback, private, link-local and other internal addresses are refused")

// specialPrefixes are ranges outside the public unicast Internet that the
// netip predicates do not cover: shared, reserved, documentation,
// benchmarking and protocol-assignment space (the IANA special-purpose
// address registries). None of them is where a callback or a model
// provider lives, and some reach this host or its network.
var specialPrefixes = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // "this network"; Linux connects 0.0.0.0 to this host
		"100.64.0.0/10",   // carrier-grade NAT (shared address space)
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation (TEST-NET-1)
		"192.88.99.0/24",  // deprecated 6to4 relay anycast
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation (TEST-NET-2)
		"203.0.113.0/24",  // documentation (TEST-NET-3)
		"240.0.0.0/4",     // reserved, and the broadcast address 255.255.255.255
		"::/96",           // IPv4-compatible (deprecated), with :: and ::1
		"64:ff9b:1::/48",  // local-use NAT64
		"100::/64",        // discard-only
		"2001::/23",       // IETF protocol assignments: Teredo, benchmarking, ORCHID
		"2001:db8::/32",   // documentation
		"3fff::/20",       // documentation
		"5f00::/16",       // segment routing (SRv6) SIDs
		"fec0::/10",       // site-local (deprecated)
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Internal reports addresses that belong to this host or its network, or
// that are no public unicast address at all. An IPv6 address that carries
// an IPv4 address a translator or relay will connect to (IPv4-mapped,
// NAT64, 6to4) is judged by that IPv4 address.
func Internal(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		// A zone names one of this host's interfaces.
		return true
	}
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return Internal(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return Internal(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		// Loopback, link-local, multicast, unspecified, broadcast, and
		// RFC 1918 and unique-local space.
		return true
	}
	for _, p := range specialPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Policy decides which destinations an outbound call may reach. The zero
// Policy refuses every internal address.
type Policy struct {
	// AllowInternal lets every address through: development mode's
	// callbacks, which an agent on the same machine receives.
	AllowInternal bool
	// AllowHost, when set, names hosts that may be internal all the same:
	// on-premises servers an admin listed. It is asked with the host as
	// the URL names it (a name or an IP literal, without brackets or
	// port), lower-cased; a listed host's addresses are not checked.
	AllowHost func(host string) bool
}

// Allowed reports whether host may be reached whatever its addresses.
func (p Policy) Allowed(host string) bool {
	if p.AllowInternal {
		return true
	}
	return p.AllowHost != nil && p.AllowHost(NormalHost(host))
}

// NormalHost is host as policies compare it: lower-case, without the
// brackets of an IPv6 literal or a trailing dot.
func NormalHost(host string) string {
	h := strings.ToLower(strings.TrimSpace(host))
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(h, ".")
}

// Check resolves host and refuses it (ErrInternal) when any of its
// addresses is internal and the policy does not allow it. It gives an
// early, clear answer (when a callback URL or a deployment is saved, or
// before a request); the connect-time check (Transport) is the one that
// holds.
func (p Policy) Check(ctx context.Context, host string) error {
	if p.Allowed(host) {
		return nil
	}
	h := NormalHost(host)
	if a, err := netip.ParseAddr(h); err == nil {
		if Internal(a) {
			return ErrInternal
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
	if err != nil {
		return fmt.Errorf("the host %q does not resolve", h)
	}
	for _, a := range addrs {
		if Internal(a) {
			return ErrInternal
		}
	}
	return nil
}

// refuse is a dialer's Control function that refuses internal addresses.
// address is the socket address being connected to, after name resolution
// (each address tried is checked), and with no proxy it is the
// destination itself.
func refuse(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || Internal(ap.Addr()) {
		return ErrInternal
	}
	return nil
}

// DialContext dials as d does, refusing internal addresses at connect
// time unless the policy allows the host being dialled. d is not changed.
func (p Policy) DialContext(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	open := *d
	checked := *d
	checked.Control = refuse
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		if p.Allowed(host) {
			return open.DialContext(ctx, network, address)
		}
		return checked.DialContext(ctx, network, address)
	}
}

// Transport is an HTTP transport that dials through the policy (a 10 s
// connect timeout) and never through a proxy: a proxy would be the
// address checked, not the destination.
func (p Policy) Transport() *http.Transport {
	return &http.Transport{
		DialContext:           p.DialContext(&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}),
		Proxy:                 nil,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// NoRedirects is an http.Client's CheckRedirect that follows none: the
// 3xx itself is the answer. A redirect would send the request, with its
// credentials, somewhere its owner never named.
func NoRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
