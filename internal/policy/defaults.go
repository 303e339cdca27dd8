package policy

import _ "embed"

// DefaultsFile is the name errors and logs give the embedded defaults.
const DefaultsFile = "<embedded defaults>"

//go:embed defaults.yaml
var defaultsYAML []byte

// DefaultsYAML returns the embedded default policies as written.
func DefaultsYAML() []byte { return defaultsYAML }

// LoadDefaults parses the embedded defaults, the seed system.
func LoadDefaults() (*Set, error) {
	ps, err := Parse(DefaultsFile, defaultsYAML)
	if err != nil {
		return nil, err
	}
	return NewSet(ps)
}

// Load reads the policies at path, or the embedded defaults when path is empty.
func Load(path string) (*Set, error) {
	if path == "" {
		return LoadDefaults()
	}
	return LoadPath(path)
}
