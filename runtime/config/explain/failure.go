package explain

import "github.com/flowstate/flowstate/runtime/config"

// Failure describes a configuration that does not load, in the shape of Explanation's
// outcome fields.
type Failure struct {
	// ConfigFile is the file as given.
	ConfigFile string `json:"config_file"`
	// Valid is false.
	Valid bool `json:"valid"`
	// Errors has one entry per problem.
	Errors []config.ErrorEntry `json:"errors"`
	// Overrides are the -D and -p settings given, secrets masked.
	Overrides []string `json:"overrides"`
}

// Failed describes err, the error of loading or resolving file with overrides.
func Failed(file string, overrides []config.Override, err error) Failure {
	return Failure{ConfigFile: file, Errors: config.ErrorEntries(err), Overrides: overrideTexts(overrides)}
}
