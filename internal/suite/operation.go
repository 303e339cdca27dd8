package suite

import (
	"strings"

	"github.com/tollgate-dev/tollgate/internal/admission"
)

func operation(s string) admission.Operation {
	if s == "" {
		return admission.Create
	}
	return admission.Operation(strings.ToUpper(s))
}
