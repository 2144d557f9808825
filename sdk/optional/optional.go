// Package optional is the one way to combine a value of the contract with optional
// interfaces, in the spirit of net/http's ResponseController: the runner discovers the
// optional interfaces of a CheckpointStorageAccess (sdk.SharedStateLister, sdk.LeaseStore,
// sdk.LocalStateLocator) and of a CheckpointStorageLocation (sdk.LocalStateFactory) with
// type assertions, so a value that wraps or stands for another (a gRPC client of a
// plugin's access, a storage whose file system allows only some of them, the runner's
// fence, a test's fault injector) must implement exactly the interfaces it means to. Access
// and Location build such values; AccessInterfacesOf finds the interfaces a value has.
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
	)
	lists, leases, locates := with.Lister != nil, with.Lease != nil, with.Locator != nil
	switch {
	case lists && leases && locates:
		return struct {
			a
			l
			s
			c
		}{base, with.Lister, with.Lease, with.Locator}
	case lists && leases:
		return struct {
			a
			l
			s
		}{base, with.Lister, with.Lease}
	case lists && locates:
		return struct {
			a
			l
			c
		}{base, with.Lister, with.Locator}
	case leases && locates:
		return struct {
			a
			s
			c
		}{base, with.Lease, with.Locator}
	case lists:
		return struct {
			a
			l
		}{base, with.Lister}
	case leases:
		return struct {
			a
			s
		}{base, with.Lease}
	case locates:
		return struct {
			a
			c
		}{base, with.Locator}
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
