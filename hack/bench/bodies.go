package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// body is one review every contender is sent.
type body struct {
	name string
	data []byte
}

// bodies are the captured Pod CREATE review, the same Pod with 10
// containers, and a Deployment CREATE review.
func bodies(root string) ([]body, error) {
	captured, err := os.ReadFile(filepath.Join(root, "internal", "admission", "testdata", "review-pod-create.json"))
	if err != nil {
		return nil, err
	}
	var review map[string]any
	if err := json.Unmarshal(captured, &review); err != nil {
		return nil, err
	}
	req := review["request"].(map[string]any)
	pod := req["object"].(map[string]any)
	spec := pod["spec"].(map[string]any)
	base := spec["containers"].([]any)[0].(map[string]any)
	var ten []any
	for i := range 10 {
		c := map[string]any{}
		for k, v := range base {
			c[k] = v
		}
		c["name"] = fmt.Sprintf("c%d", i)
		ten = append(ten, c)
	}
	spec["containers"] = ten
	tenPod, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}

	var dep map[string]any
	if err := json.Unmarshal(captured, &dep); err != nil {
		return nil, err
	}
	dreq := dep["request"].(map[string]any)
	dpod := dreq["object"].(map[string]any)
	meta := dpod["metadata"].(map[string]any)
	dreq["kind"] = map[string]any{"group": "apps", "version": "v1", "kind": "Deployment"}
	dreq["requestKind"] = dreq["kind"]
	dreq["resource"] = map[string]any{"group": "apps", "version": "v1", "resource": "deployments"}
	dreq["requestResource"] = dreq["resource"]
	dreq["name"] = "checkout"
	dreq["object"] = map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "checkout", "namespace": meta["namespace"], "labels": meta["labels"]},
		"spec": map[string]any{
			"replicas": 3,
			"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "checkout"}},
			"template": map[string]any{"metadata": map[string]any{"labels": meta["labels"], "annotations": meta["annotations"]}, "spec": dpod["spec"]},
		},
	}
	deployment, err := json.Marshal(dep)
	if err != nil {
		return nil, err
	}
	return []body{{"captured Pod (16 KB)", captured}, {"Pod, 10 containers", tenPod}, {"Deployment", deployment}}, nil
}
