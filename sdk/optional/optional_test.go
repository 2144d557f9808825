package optional_test

import (
	"context"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/optional"
)

type (
	bare    struct{ sdk.CheckpointStorageAccess }
	lister  struct{ sdk.SharedStateLister }
	leaser  struct{ sdk.LeaseStore }
	locator struct{ sdk.LocalStateLocator }
	adopter struct{ sdk.RemoteFileAdopter }
)

type namedLease string

func (n namedLease) ReadLease(context.Context) (sdk.LeaseRecord, error) {
	return sdk.LeaseRecord{Data: []byte(n), Version: "1"}, nil
}

func (n namedLease) WriteLease(context.Context, []byte, string) (string, error) { return "", nil }

// withBits returns an access implementing the optional interfaces bits names: 1 lists,
// 2 leases, 4 locates, 8 adopts.
func withBits(bits int) sdk.CheckpointStorageAccess {
	switch bits {
	case 1:
		return struct {
			bare
			lister
		}{}
	case 2:
		return struct {
			bare
			leaser
		}{}
	case 3:
		return struct {
			bare
			lister
			leaser
		}{}
	case 4:
		return struct {
			bare
			locator
		}{}
	case 5:
		return struct {
			bare
			lister
			locator
		}{}
	case 6:
		return struct {
			bare
			leaser
			locator
		}{}
	case 7:
		return struct {
			bare
			lister
			leaser
			locator
		}{}
	case 8:
		return struct {
			bare
			adopter
		}{}
	case 9:
		return struct {
			bare
			lister
			adopter
		}{}
	case 10:
		return struct {
			bare
			leaser
			adopter
		}{}
	case 11:
		return struct {
			bare
			lister
			leaser
			adopter
		}{}
	case 12:
		return struct {
			bare
			locator
			adopter
		}{}
	case 13:
		return struct {
			bare
			lister
			locator
			adopter
		}{}
	case 14:
		return struct {
			bare
			leaser
			locator
			adopter
		}{}
	case 15:
		return struct {
			bare
			lister
			leaser
			locator
			adopter
		}{}
	}
	return bare{}
}

// bitsOf returns the optional interfaces a implements, as withBits numbers them.
func bitsOf(a sdk.CheckpointStorageAccess) int {
	bits := 0
	if _, ok := a.(sdk.SharedStateLister); ok {
		bits |= 1
	}
	if _, ok := a.(sdk.LeaseStore); ok {
		bits |= 2
	}
	if _, ok := a.(sdk.LocalStateLocator); ok {
		bits |= 4
	}
	if _, ok := a.(sdk.RemoteFileAdopter); ok {
		bits |= 8
	}
	return bits
}

// TestAccessKeepsExactlyTheInnerInterfaces wraps accesses with every combination of the
// optional interfaces: the result has those of the inner access and no other.
func TestAccessKeepsExactlyTheInnerInterfaces(t *testing.T) {
	for bits := 0; bits < 16; bits++ {
		inner := withBits(bits)
		got := optional.Access(bare{inner}, optional.AccessInterfacesOf(bare{inner}, inner))
		if b := bitsOf(got); b != bits {
			t.Errorf("inner with interfaces %04b: the wrapped access has %04b", bits, b)
		}
	}
}

// TestAccessHidesTheBasesOwnInterfaces: the result implements what it is given, not what
// its base implements besides.
func TestAccessHidesTheBasesOwnInterfaces(t *testing.T) {
	base := withBits(15)
	for bits := 0; bits < 16; bits++ {
		with := optional.AccessInterfacesOf(withBits(bits))
		if b := bitsOf(optional.Access(base, with)); b != bits {
			t.Errorf("given %04b over a base with all: the access has %04b", bits, b)
		}
	}
}

// overridingLease is a wrapper with a lease of its own.
type overridingLease struct {
	sdk.CheckpointStorageAccess
	namedLease
}

// TestAccessPrefersTheWrappersMethods: a wrapper that implements an optional interface
// itself answers it; the others come from the inner access.
func TestAccessPrefersTheWrappersMethods(t *testing.T) {
	inner := struct {
		bare
		lister
		leaser
	}{leaser: leaser{namedLease("inner")}}
	wrapper := overridingLease{bare{inner}, "wrapper"}
	got := optional.Access(wrapper, optional.AccessInterfacesOf(wrapper, inner))
	r, err := got.(sdk.LeaseStore).ReadLease(context.Background())
	if err != nil || string(r.Data) != "wrapper" {
		t.Fatalf("lease read %q, %v; want the wrapper's", r.Data, err)
	}
	if _, ok := got.(sdk.SharedStateLister); !ok {
		t.Fatalf("the inner access's lister was dropped")
	}
	r, _ = optional.Access(bare{inner}, optional.AccessInterfacesOf(bare{inner}, inner)).(sdk.LeaseStore).ReadLease(context.Background())
	if string(r.Data) != "inner" {
		t.Fatalf("lease read %q; want the inner access's", r.Data)
	}
}

type (
	bareLocation struct{ sdk.CheckpointStorageLocation }
	factory      struct{ sdk.LocalStateFactory }
)

// TestLocationHasTheFactoryExactlyWhenGiven: a location combined with a factory creates
// local state files, one combined with none does not, whatever its base implements.
func TestLocationHasTheFactoryExactlyWhenGiven(t *testing.T) {
	local := struct {
		bareLocation
		factory
	}{}
	for _, base := range []sdk.CheckpointStorageLocation{bareLocation{}, local} {
		if _, ok := optional.Location(base, nil).(sdk.LocalStateFactory); ok {
			t.Errorf("location over %T without a factory creates local files", base)
		}
		if _, ok := optional.Location(base, factory{}).(sdk.LocalStateFactory); !ok {
			t.Errorf("location over %T with a factory creates no local files", base)
		}
	}
}
