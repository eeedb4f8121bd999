package runtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// errPrivateAddress refuses a callback to an address inside the network:
// an agent must not make Warden call its neighbours (SSRF).
var errPrivateAddress = errors.New("callbacks may not go to loopback, private, link-local or other internal addresses")

// specialPrefixes are ranges outside the public unicast Internet that the
// netip predicates do not cover: shared, reserved, documentation,
// benchmarking and protocol-assignment space (the IANA special-purpose
// address registries). None of them is where an agent's callback lives,
// and some reach this host or its network.
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

// internal reports addresses that belong to this host or its network, or
// that are no public unicast address at all. An IPv6 address that carries
// an IPv4 address a translator or relay will connect to (IPv4-mapped,
// NAT64, 6to4) is judged by that IPv4 address.
func internal(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		// A zone names one of this host's interfaces.
		return true
	}
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return internal(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return internal(netip.AddrFrom4([4]byte(b[2:6])))
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

// checkCallbackHost resolves host and refuses internal addresses, unless
// the service allows them (development mode, tests on loopback).
func (s *Service) checkCallbackHost(ctx context.Context, host string) error {
	if s.o.AllowPrivateCallbacks {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if internal(a) {
			return errPrivateAddress
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("the callback host %q does not resolve", host)
	}
	for _, a := range addrs {
		if internal(a) {
			return errPrivateAddress
		}
	}
	return nil
}

// callbackClient posts callbacks. Outside development mode its dialer
// refuses internal addresses at connect time too, so a name that resolved
// elsewhere at proposal time cannot be pointed inside later.
func (s *Service) callbackClient() *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if !s.o.AllowPrivateCallbacks {
		// address is the socket address being connected to, after name
		// resolution (each address tried is checked), and with Proxy nil
		// it is the callback host itself, never a proxy in between.
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || internal(ap.Addr()) {
				return errPrivateAddress
			}
			return nil
		}
	}
	return &http.Client{
		Timeout:       15 * time.Second,
		Transport:     &http.Transport{DialContext: d.DialContext, Proxy: nil, MaxIdleConnsPerHost: 2},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
