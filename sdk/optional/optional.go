// Package optional is the one way to combine a value of the contract with optional
// interfaces, in the spirit of net/http's ResponseController: the runner discovers the
// optional interfaces of a CheckpointStorageAccess (sdk.SharedStateLister, sdk.LeaseStore,
// sdk.LocalStateLocator, sdk.RemoteFileAdopter) and of a CheckpointStorageLocation
// (sdk.LocalStateFactory) with type assertions, so a value that wraps or stands for another
// (a gRPC client of a plugin's access, a storage whose file system allows only some of
// them, the runner's fence, a test's fault injector) must implement exactly the interfaces
// it means to. Access and Location build such values; AccessInterfacesOf finds the
// interfaces a value has.
//
// It imports only the contract (package sdk), so plugins and hosts both may use it; it must
// never import the server, the host end or the protocol.
package optional

import "github.com/flowstate/flowstate/sdk"

// AccessInterfaces are the optional interfaces of a CheckpointStorageAccess, each nil when
// absent.
type AccessInterfaces struct {
	// Lister lists the job's shared state.
	Lister sdk.SharedStateLister
	// Lease stores the job's lease record.
	Lease sdk.LeaseStore
	// Locator finds the local files of state handles.
	Locator sdk.LocalStateLocator
	// Adopter takes over files a backend keeps on a store of its own.
	Adopter sdk.RemoteFileAdopter
}

// AccessInterfacesOf returns, for each optional interface of an access, the first of vs
// that implements it: AccessInterfacesOf(wrapper, inner) keeps a wrapper's own methods and
// takes the others from what it wraps.
func AccessInterfacesOf(vs ...any) AccessInterfaces {
	var o AccessInterfaces
	for _, v := range vs {
		if l, ok := v.(sdk.SharedStateLister); ok && o.Lister == nil {
			o.Lister = l
		}
		if l, ok := v.(sdk.LeaseStore); ok && o.Lease == nil {
			o.Lease = l
		}
		if l, ok := v.(sdk.LocalStateLocator); ok && o.Locator == nil {
			o.Locator = l
		}
		if r, ok := v.(sdk.RemoteFileAdopter); ok && o.Adopter == nil {
			o.Adopter = r
		}
	}
	return o
}

// Access returns base implementing exactly the optional interfaces that with holds, by
// their methods there; base's own optional methods, if any, are hidden. The methods of
// sdk.CheckpointStorageAccess are base's.
func Access(base sdk.CheckpointStorageAccess, with AccessInterfaces) sdk.CheckpointStorageAccess {
	type (
		a = sdk.CheckpointStorageAccess
		l = sdk.SharedStateLister
		s = sdk.LeaseStore
		c = sdk.LocalStateLocator
		r = sdk.RemoteFileAdopter
	)
	bits := 0 // 1 lists, 2 leases, 4 locates, 8 adopts
	for i, has := range []bool{with.Lister != nil, with.Lease != nil, with.Locator != nil, with.Adopter != nil} {
		if has {
			bits |= 1 << i
		}
	}
	switch bits {
	case 15:
		return struct {
			a
			l
			s
			c
			r
		}{base, with.Lister, with.Lease, with.Locator, with.Adopter}
	case 14:
		return struct {
			a
			s
			c
			r
		}{base, with.Lease, with.Locator, with.Adopter}
	case 13:
		return struct {
			a
			l
			c
			r
		}{base, with.Lister, with.Locator, with.Adopter}
	case 12:
		return struct {
			a
			c
			r
		}{base, with.Locator, with.Adopter}
	case 11:
		return struct {
			a
			l
			s
			r
		}{base, with.Lister, with.Lease, with.Adopter}
	case 10:
		return struct {
			a
			s
			r
		}{base, with.Lease, with.Adopter}
	case 9:
		return struct {
			a
			l
			r
		}{base, with.Lister, with.Adopter}
	case 8:
		return struct {
			a
			r
		}{base, with.Adopter}
	case 7:
		return struct {
			a
			l
			s
			c
		}{base, with.Lister, with.Lease, with.Locator}
	case 6:
		return struct {
			a
			s
			c
		}{base, with.Lease, with.Locator}
	case 5:
		return struct {
			a
			l
			c
		}{base, with.Lister, with.Locator}
	case 4:
		return struct {
			a
			c
		}{base, with.Locator}
	case 3:
		return struct {
			a
			l
			s
		}{base, with.Lister, with.Lease}
	case 2:
		return struct {
			a
			s
		}{base, with.Lease}
	case 1:
		return struct {
			a
			l
		}{base, with.Lister}
	}
	return struct{ a }{base}
}

// Location returns base implementing sdk.LocalStateFactory, by factory's methods, exactly
// when factory is not nil; base's own LocalStateFactory methods, if any, are hidden. The
// methods of sdk.CheckpointStorageLocation are base's.
func Location(base sdk.CheckpointStorageLocation, factory sdk.LocalStateFactory) sdk.CheckpointStorageLocation {
	if factory == nil {
		return struct{ sdk.CheckpointStorageLocation }{base}
	}
	return struct {
		sdk.CheckpointStorageLocation
		sdk.LocalStateFactory
	}{base, factory}
}
