package suite

import (
	"errors"
	"fmt"

	"github.com/tollgate-dev/tollgate/internal/manifest"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// readJSON reads a YAML file as JSON; a YAML error names the file.
func readJSON(file string) ([]byte, error) {
	data, err := manifest.ReadFile(file)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return js, nil
}

// readStrict reads a YAML file into v, refusing unknown and duplicate
// fields; errors name the file.
func readStrict(file string, v any) error {
	js, err := readJSON(file)
	if err != nil {
		return err
	}
	strict, err := sigsjson.UnmarshalStrict(js, v, sigsjson.DisallowUnknownFields)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
