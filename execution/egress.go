package execution

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/wardenhq/warden/platform/egress"
)

// errPrivateAddress refuses a callback to an address inside the network:
// an agent must not make Warden call its neighbours (SSRF).
var errPrivateAddress = errors.New("callbacks may not go to loopback, private, link-local or other internal addresses")

// egressPolicy is the callbacks' egress policy (package egress): internal
// addresses are refused unless the service allows them (development mode,
// tests on loopback).
func (s *Service) egressPolicy() egress.Policy {
	return egress.Policy{AllowInternal: s.o.AllowPrivateCallbacks}
}

// checkCallbackHost resolves host and refuses internal addresses, when the
// action is proposed, so the agent hears why at once.
func (s *Service) checkCallbackHost(ctx context.Context, host string) error {
	err := s.egressPolicy().Check(ctx, host)
	if errors.Is(err, egress.ErrInternal) {
		return errPrivateAddress
	}
	return err
}

// callbackClient posts callbacks. Outside development mode its dialer
// refuses internal addresses at connect time too, so a name that resolved
// elsewhere at proposal time cannot be pointed inside later; it follows no
// redirects.
func (s *Service) callbackClient() *http.Client {
	t := s.egressPolicy().Transport()
	t.MaxIdleConnsPerHost = 2
	return &http.Client{Timeout: 15 * time.Second, Transport: t, CheckRedirect: egress.NoRedirects}
}
