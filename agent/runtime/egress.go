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

// internal reports addresses that belong to this host or its network.
func internal(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(a) // carrier-grade NAT
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
