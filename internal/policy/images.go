package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/gobwas/glob"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/imageverify"
)

// VerifyImages requires the images of matched Pods and Pod templates to be
// signed by one of the attestors.
type VerifyImages struct {
	// Images are the images checked, as globs: * is any run of
	// characters (/ and : too), ? one. An image matching none is not
	// checked, and gets no result.
	Images []string `json:"images"`
	// Attestors: a signature by any one of them verifies an image.
	Attestors []ImageAttestor `json:"attestors"`
	// Action is Deny (default), Warn or Audit, as for validate.
	Action ValidateAction `json:"action,omitempty"`
}

// ImageAttestor is a cosign public key.
type ImageAttestor struct {
	// Name is how results and messages name the attestor.
	Name string `json:"name"`
	// PublicKey is PEM (ECDSA, RSA or ed25519), as cosign.pub.
	PublicKey string `json:"publicKey"`
	// TransparencyLog: Required (cosign verify's default) or Ignore.
	TransparencyLog TransparencyLog `json:"transparencyLog,omitempty"`
}

// TransparencyLog says whether a signature must be in a transparency log.
type TransparencyLog string

// The two choices of ImageAttestor.TransparencyLog.
const (
	TransparencyLogRequired TransparencyLog = "Required"
	TransparencyLogIgnore   TransparencyLog = "Ignore"
)

// ImageCheck is a verifyImages policy compiled.
type ImageCheck struct {
	globs       []glob.Glob
	requirement imageverify.Requirement
}

// ImageCheck returns the compiled verifyImages, nil for other policies.
func (p *Policy) ImageCheck() *ImageCheck { return p.compiled.images }

// Selects tells whether the policy checks the image.
func (c *ImageCheck) Selects(image string) bool {
	for _, g := range c.globs {
		if g.Match(image) {
			return true
		}
	}
	return false
}

// Requirement is what a selected image must have.
func (c *ImageCheck) Requirement() imageverify.Requirement { return c.requirement }

func (v *VerifyImages) verify(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(v.Images) == 0 {
		errs = append(errs, field.Required(path.Child("images"), `name the images to check, e.g. "registry.example.com/*"`))
	}
	for i, g := range v.Images {
		if _, err := glob.Compile(g); err != nil || g == "" {
			errs = append(errs, field.Invalid(path.Child("images").Index(i), g, fmt.Sprintf("not a glob: %v", err)))
		}
	}
	switch v.Action {
	case "", Deny, Warn, Audit:
	default:
		errs = append(errs, field.NotSupported(path.Child("action"), v.Action, []ValidateAction{Deny, Warn, Audit}))
	}
	if len(v.Attestors) == 0 {
		errs = append(errs, field.Required(path.Child("attestors"), "name at least one attestor with its publicKey"))
	}
	names := sets.New[string]()
	for i, a := range v.Attestors {
		p := path.Child("attestors").Index(i)
		for _, msg := range validation.IsDNS1123Label(a.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), a.Name, msg))
		}
		if names.Has(a.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), a.Name))
		}
		names.Insert(a.Name)
		if a.PublicKey == "" {
			errs = append(errs, field.Required(p.Child("publicKey"), "a PEM public key, as cosign.pub"))
		} else if _, err := imageverify.NewKeyAttestor(a.Name, a.PublicKey); err != nil {
			errs = append(errs, field.Invalid(p.Child("publicKey"), "(PEM)", err.Error()))
		}
		switch a.TransparencyLog {
		case TransparencyLogIgnore:
		case "", TransparencyLogRequired:
			errs = append(errs, field.Invalid(p.Child("transparencyLog"), string(TransparencyLogRequired),
				"checking a transparency log entry needs the log's keys (a trusted root), which tollgate does not read yet; "+
					"set transparencyLog: Ignore to rely on the key alone, as cosign verify --insecure-ignore-tlog does"))
		default:
			errs = append(errs, field.NotSupported(p.Child("transparencyLog"), a.TransparencyLog, []TransparencyLog{TransparencyLogRequired, TransparencyLogIgnore}))
		}
	}
	return errs
}

// compileImages compiles a verified verifyImages: its globs and
// attestors, and the requirement's cache ID, which changes with the spec.
func compileImages(name string, v *VerifyImages) (*ImageCheck, error) {
	c := &ImageCheck{}
	for _, g := range v.Images {
		compiled, err := glob.Compile(g)
		if err != nil {
			return nil, fmt.Errorf("spec.verifyImages.images: %w", err)
		}
		c.globs = append(c.globs, compiled)
	}
	for _, a := range v.Attestors {
		att, err := imageverify.NewKeyAttestor(a.Name, a.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("spec.verifyImages.attestors %s: %w", a.Name, err)
		}
		c.requirement.Attestors = append(c.requirement.Attestors, att)
	}
	spec, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("spec.verifyImages: %w", err)
	}
	sum := sha256.Sum256(spec)
	c.requirement.ID = name + "/" + hex.EncodeToString(sum[:8])
	return c, nil
}
