//go:build e2e

package framework

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

// ApplyWebhooks creates, unchanged, the webhook configurations `tollgate
// manifests` printed, decoded strictly and created with strict field
// validation; it returns how many. Any other kind is an error.
func ApplyWebhooks(ctx context.Context, client kubernetes.Interface, manifests []byte) (int, error) {
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifests)))
	create := metav1.CreateOptions{FieldValidation: "Strict"}
	applied := 0
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return applied, nil
		} else if err != nil {
			return applied, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			return applied, fmt.Errorf("manifests do not decode strictly: %w", err)
		}
		switch o := obj.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			_, err = client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, o, create)
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			_, err = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, o, create)
		default:
			return applied, fmt.Errorf("unexpected %T in manifests", obj)
		}
		if err != nil {
			return applied, fmt.Errorf("create %T: %w", obj, err)
		}
		applied++
	}
}
