package policy

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tollgate-dev/tollgate/internal/imageverify"
)

// ImageAttestor signs images: a cosign public key, or a keyless identity
// (a Fulcio certificate for an OIDC issuer and subject) under the
// policy's trustedRoot.
type ImageAttestor struct {
	// Name is how results and messages name the attestor.
	Name string `json:"name"`
	// PublicKey is PEM (ECDSA, RSA or ed25519), as cosign.pub.
	PublicKey string `json:"publicKey,omitempty"`
	// Keyless is the identity of keyless signatures.
	Keyless *KeylessIdentity `json:"keyless,omitempty"`
	// TransparencyLog: Required (cosign verify's default) or Ignore. A
	// keyless signature without it needs a timestamp authority's stamp.
	TransparencyLog TransparencyLog `json:"transparencyLog,omitempty"`
	// CertificateTransparency (keyless only): Required (default), an SCT
	// in the certificate, or Ignore.
	CertificateTransparency TransparencyLog `json:"certificateTransparency,omitempty"`
}

// KeylessIdentity is who keyless signatures must come from, each part
// exact or a regular expression (RE2), as cosign's --certificate-identity
// and --certificate-oidc-issuer (or their -regexp forms) say.
type KeylessIdentity struct {
	Issuer        string `json:"issuer,omitempty"`
	IssuerRegExp  string `json:"issuerRegExp,omitempty"`
	Subject       string `json:"subject,omitempty"`
	SubjectRegExp string `json:"subjectRegExp,omitempty"`
}

// TransparencyLog says whether a signature must be in a transparency log.
type TransparencyLog string

// The two choices of ImageAttestor.TransparencyLog.
const (
	TransparencyLogRequired TransparencyLog = "Required"
	TransparencyLogIgnore   TransparencyLog = "Ignore"
)

var transparencyChoices = []TransparencyLog{TransparencyLogRequired, TransparencyLogIgnore}

func verifyAttestors(path *field.Path, v *VerifyImages) field.ErrorList {
	var errs field.ErrorList
	if len(v.Attestors) == 0 {
		errs = append(errs, field.Required(path.Child("attestors"), "name at least one attestor with its publicKey or keyless identity"))
	}
	var rootErr error
	if v.TrustedRoot != "" {
		rootErr = imageverify.CheckTrustedRoot([]byte(v.TrustedRoot))
	}
	names := sets.New[string]()
	keyless := false
	for i, a := range v.Attestors {
		p := path.Child("attestors").Index(i)
		for _, msg := range validation.IsDNS1123Label(a.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), a.Name, msg))
		}
		if names.Has(a.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), a.Name))
		}
		names.Insert(a.Name)
		switch {
		case a.PublicKey != "" && a.Keyless != nil:
			errs = append(errs, field.Forbidden(p, "give either publicKey or keyless, not both"))
		case a.Keyless != nil:
			keyless = true
			errs = append(errs, a.verifyKeyless(p, v.TrustedRoot, v.TrustedRoot != "" && rootErr == nil)...)
		case a.PublicKey == "":
			errs = append(errs, field.Required(p.Child("publicKey"), "a PEM public key, as cosign.pub, or a keyless identity"))
		default:
			errs = append(errs, a.verifyKey(p)...)
		}
	}
	switch {
	case v.TrustedRoot != "" && !keyless:
		errs = append(errs, field.Forbidden(path.Child("trustedRoot"), "only keyless attestors read a trusted root"))
	case v.TrustedRoot == "" && keyless:
		errs = append(errs, field.Required(path.Child("trustedRoot"),
			"keyless attestors need a Sigstore trusted root (JSON), such as cosign trusted-root create writes"))
	case keyless && rootErr != nil:
		errs = append(errs, field.Invalid(path.Child("trustedRoot"), "(JSON)", rootErr.Error()))
	}
	return errs
}

func (a *ImageAttestor) verifyKey(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := imageverify.NewKeyAttestor(a.Name, a.PublicKey); err != nil {
		errs = append(errs, field.Invalid(p.Child("publicKey"), "(PEM)", err.Error()))
	}
	switch a.TransparencyLog {
	case TransparencyLogIgnore:
	case "", TransparencyLogRequired:
		errs = append(errs, field.Invalid(p.Child("transparencyLog"), string(TransparencyLogRequired),
			"checking a key's transparency log entry is not built yet; "+
				"set transparencyLog: Ignore to rely on the key alone, as cosign verify --insecure-ignore-tlog does"))
	default:
		errs = append(errs, field.NotSupported(p.Child("transparencyLog"), a.TransparencyLog, transparencyChoices))
	}
	if a.CertificateTransparency != "" {
		errs = append(errs, field.Forbidden(p.Child("certificateTransparency"), "only keyless signatures carry a certificate"))
	}
	return errs
}

// verifyKeyless checks a keyless attestor; its identity is compiled
// only under a trusted root that reads (rootOK), whose own errors are said
// once, at trustedRoot.
func (a *ImageAttestor) verifyKeyless(p *field.Path, trustedRoot string, rootOK bool) field.ErrorList {
	var errs field.ErrorList
	k, kp := a.Keyless, p.Child("keyless")
	for _, pair := range []struct{ exact, re, name string }{{k.Issuer, k.IssuerRegExp, "issuer"}, {k.Subject, k.SubjectRegExp, "subject"}} {
		switch {
		case pair.exact == "" && pair.re == "":
			errs = append(errs, field.Required(kp.Child(pair.name), "give "+pair.name+" or "+pair.name+"RegExp"))
		case pair.exact != "" && pair.re != "":
			errs = append(errs, field.Forbidden(kp.Child(pair.name+"RegExp"), "give "+pair.name+" or "+pair.name+"RegExp, not both"))
		}
	}
	for _, f := range []struct {
		name  string
		value TransparencyLog
	}{{"transparencyLog", a.TransparencyLog}, {"certificateTransparency", a.CertificateTransparency}} {
		switch f.value {
		case "", TransparencyLogRequired, TransparencyLogIgnore:
		default:
			errs = append(errs, field.NotSupported(p.Child(f.name), f.value, transparencyChoices))
		}
	}
	if len(errs) == 0 && rootOK {
		if _, err := a.attestor(trustedRoot); err != nil {
			errs = append(errs, field.Invalid(kp, a.Keyless.Subject+a.Keyless.SubjectRegExp, err.Error()))
		}
	}
	return errs
}

// attestor is the verified attestor, compiled.
func (a *ImageAttestor) attestor(trustedRoot string) (imageverify.Attestor, error) {
	if a.Keyless == nil {
		return imageverify.NewKeyAttestor(a.Name, a.PublicKey)
	}
	k := a.Keyless
	return imageverify.NewKeylessAttestor(a.Name, []byte(trustedRoot),
		imageverify.Identity{Issuer: k.Issuer, IssuerRegExp: k.IssuerRegExp, Subject: k.Subject, SubjectRegExp: k.SubjectRegExp},
		imageverify.KeylessOptions{TransparencyLog: a.TransparencyLog != TransparencyLogIgnore, CertificateTransparency: a.CertificateTransparency != TransparencyLogIgnore})
}
