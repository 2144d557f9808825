// Package interop holds the tests that the built-in state backends restore each other's
// snapshots (hashmap's into leveldb and back, through the canonical format). It lives
// apart from the plugins because a plugin never imports another; it is tests only, and
// imports the plugins' packages and the SDK, never the runtime.
package interop
