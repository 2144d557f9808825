//go:build !linux

package server

// nameProcess: the process keeps the name its host gave it.
func nameProcess() {}
