package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"

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
	// Attestors: a signature by any one of them verifies an image, and
	// they sign its attestations.
	Attestors []ImageAttestor `json:"attestors"`
	// Signature is Required (default): an image needs a signature by an
	// attestor; or Ignore: its attestations alone are required (each is
	// signed too, over a statement naming the image's digest).
	Signature SignatureRule `json:"signature,omitempty"`
	// Attestations an image must carry, each signed by an attestor.
	Attestations []ImageAttestation `json:"attestations,omitempty"`
	// TrustedRoot is a Sigstore trusted root (JSON: Fulcio CAs, Rekor,
	// CT and timestamp authorities' keys), for keyless attestors.
	TrustedRoot string `json:"trustedRoot,omitempty"`
	// Action is Deny (default), Warn or Audit, as for validate.
	Action ValidateAction `json:"action,omitempty"`
}

// SignatureRule says whether an image needs a signature.
type SignatureRule string

// The two choices of VerifyImages.Signature.
const (
	SignatureRequired SignatureRule = "Required"
	SignatureIgnore   SignatureRule = "Ignore"
)

// ImageAttestation is an in-toto attestation an image must carry: a
// statement of PredicateType about the image, as cosign attest writes it
// (an attestation tag or a Sigstore bundle), signed by an attestor.
// Every such statement must meet every condition, as cosign
// verify-attestation --policy has it.
type ImageAttestation struct {
	// Name is how reasons name the attestation.
	Name string `json:"name"`
	// PredicateType is a URI, such as https://slsa.dev/provenance/v1.
	PredicateType string `json:"predicateType"`
	// Conditions are CEL expressions over predicate, the statement's
	// predicate as JSON; each must be true.
	Conditions []ImageCondition `json:"conditions,omitempty"`
}

// ImageCondition is one CEL condition and what is said when it is false.
type ImageCondition struct {
	Expression string `json:"expression"`
	Message    string `json:"message,omitempty"`
}

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
	errs = append(errs, verifyAction(path.Child("action"), v.Action)...)
	switch v.Signature {
	case "", SignatureRequired:
	case SignatureIgnore:
		if len(v.Attestations) == 0 {
			errs = append(errs, field.Required(path.Child("attestations"), "with signature: Ignore, name the attestations an image needs"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("signature"), v.Signature, []SignatureRule{SignatureRequired, SignatureIgnore}))
	}
	errs = append(errs, verifyAttestations(path.Child("attestations"), v.Attestations)...)
	errs = append(errs, verifyAttestors(path, v)...)
	return errs
}

func verifyAttestations(path *field.Path, atts []ImageAttestation) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, a := range atts {
		p := path.Index(i)
		for _, msg := range validation.IsDNS1123Label(a.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), a.Name, msg))
		}
		if names.Has(a.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), a.Name))
		}
		names.Insert(a.Name)
		if u, err := url.Parse(a.PredicateType); err != nil || !u.IsAbs() {
			errs = append(errs, field.Invalid(p.Child("predicateType"), a.PredicateType,
				"a URI, as in the statement: https://slsa.dev/provenance/v1 for cosign's --type slsaprovenance1, https://spdx.dev/Document for spdx"))
		}
		for j, c := range a.Conditions {
			if _, err := imageverify.NewAttestation(a.Name, a.PredicateType, []imageverify.Condition{{Expression: c.Expression}}); err != nil {
				errs = append(errs, field.Invalid(p.Child("conditions").Index(j).Child("expression"), c.Expression, err.Error()))
			}
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
		att, err := a.attestor(v.TrustedRoot)
		if err != nil {
			return nil, fmt.Errorf("spec.verifyImages.attestors %s: %w", a.Name, err)
		}
		c.requirement.Attestors = append(c.requirement.Attestors, att)
	}
	c.requirement.NoSignature = v.Signature == SignatureIgnore
	for _, a := range v.Attestations {
		conds := make([]imageverify.Condition, len(a.Conditions))
		for i, cond := range a.Conditions {
			conds[i] = imageverify.Condition{Expression: cond.Expression, Message: cond.Message}
		}
		att, err := imageverify.NewAttestation(a.Name, a.PredicateType, conds)
		if err != nil {
			return nil, fmt.Errorf("spec.verifyImages.attestations %s: %w", a.Name, err)
		}
		c.requirement.Attestations = append(c.requirement.Attestations, att)
	}
	spec, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("spec.verifyImages: %w", err)
	}
	sum := sha256.Sum256(spec)
	c.requirement.ID = name + "/" + hex.EncodeToString(sum[:8])
	return c, nil
}
