//go:build e2e

package kyvernodiff

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// The UPDATEs: each policy's namespace holds a Deployment, baseName,
// created before any webhook is registered; every Deployment of the
// policy's objects is also sent as an UPDATE of it (a merge patch of its
// template, server-side dry run), so that autogen meets oldObject too.
const (
	baseName     = "kd-base"
	updateSuffix = " (UPDATE of " + baseName + ")"
)

// baseDeployment is baseName, as createBases stores it.
func baseDeployment() *appsv1.Deployment {
	labels := map[string]string{"kd-base": "true"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: baseName, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "base", Image: "registry.example.com/base:1.0"}}},
			},
		},
	}
}

// createBases stores baseName in every policy's namespace.
func createBases(t *testing.T, client kubernetes.Interface, cases []policyCase) {
	t.Helper()
	for _, c := range cases {
		if _, err := client.AppsV1().Deployments(c.namespace).Create(context.Background(), baseDeployment(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// updateBase sends o's labels and Pod template as an UPDATE of baseName
// (a JSON merge patch: maps merge, so the base's labels stay and its
// selector still matches; lists are replaced).
func updateBase(r dynamic.ResourceInterface, o *unstructured.Unstructured) error {
	template, _, _ := unstructured.NestedMap(o.Object, "spec", "template")
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"labels": o.GetLabels(), "annotations": o.GetAnnotations()},
		"spec":     map[string]any{"template": template},
	})
	if err != nil {
		return err
	}
	_, err = r.Patch(context.Background(), baseName, types.MergePatchType, patch, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// withSuffix counts the keys ending in suffix (updateSuffix, connectSuffix).
func withSuffix(keys []string, suffix string) int {
	n := 0
	for _, k := range keys {
		if strings.HasSuffix(k, suffix) {
			n++
		}
	}
	return n
}
