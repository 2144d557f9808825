//go:build !linux

package sdk

// nameProcess: the process keeps the name its host gave it.
func nameProcess() {}
