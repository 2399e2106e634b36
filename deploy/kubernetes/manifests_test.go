// Package kubernetes_test checks the Kubernetes manifests strictly, since no
// cluster runs where they are developed: the example overlay is built with
// kustomize's own library, every object is decoded into the Kubernetes API types
// with unknown fields as errors, and the references between objects are checked
// (selectors, ports, ConfigMaps, Secrets, the HPA's target, the spicepods'
// environment variables, memory limits against the runtime's --memory-limit).
package kubernetes_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// objects is what a build produced, decoded and indexed by kind and name.
type objects struct {
	services     map[string]*corev1.Service
	configMaps   map[string]*corev1.ConfigMap
	secrets      map[string]*corev1.Secret
	deployments  map[string]*appsv1.Deployment
	statefulSets map[string]*appsv1.StatefulSet
	hpas         map[string]*autoscalingv2.HorizontalPodAutoscaler
	pdbs         map[string]*policyv1.PodDisruptionBudget
	namespaces   map[string]*corev1.Namespace
}

// workload is a pod template with what owns it, for the reference checks.
type workload struct {
	kind, name string
	selector   *metav1.LabelSelector
	template   corev1.PodTemplateSpec
}

func (o *objects) workloads() []workload {
	var ws []workload
	for n, d := range o.deployments {
		ws = append(ws, workload{"Deployment", n, d.Spec.Selector, d.Spec.Template})
	}
	for n, s := range o.statefulSets {
		ws = append(ws, workload{"StatefulSet", n, s.Spec.Selector, s.Spec.Template})
	}
	return ws
}

// build runs kustomize on dir (relative to deploy/kubernetes) over an in-memory
// copy of the tree, with a generated secrets.env in the example overlay.
func build(t *testing.T, dir string) *objects {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".go") || filepath.Base(path) == "secrets.env" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return fs.WriteFile("/k/"+filepath.ToSlash(path), b)
	})
	if err != nil {
		t.Fatalf("copy manifests: %v", err)
	}
	secrets := "POSTGRES_PASSWORD=test-password\nACCELERATED_API_KEY=test-key-1\nMATERIALIZED_API_KEY=test-key-2\n"
	if err := fs.WriteFile("/k/overlays/example/secrets.env", []byte(secrets)); err != nil {
		t.Fatal(err)
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, "/k/"+dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatalf("render %s: %v", dir, err)
	}
	return decode(t, out)
}

// decode splits a multi-document YAML stream and decodes each object strictly.
func decode(t *testing.T, stream []byte) *objects {
	t.Helper()
	o := &objects{
		services: map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{},
		secrets: map[string]*corev1.Secret{}, deployments: map[string]*appsv1.Deployment{},
		statefulSets: map[string]*appsv1.StatefulSet{}, hpas: map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		pdbs: map[string]*policyv1.PodDisruptionBudget{}, namespaces: map[string]*corev1.Namespace{},
	}
	for _, doc := range bytes.Split(stream, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("read kind: %v\n%s", err, doc)
		}
		var name string
		switch meta.Kind {
		case "Service":
			name = strictInto(t, doc, o.services)
		case "ConfigMap":
			name = strictInto(t, doc, o.configMaps)
		case "Secret":
			name = strictInto(t, doc, o.secrets)
		case "Deployment":
			name = strictInto(t, doc, o.deployments)
		case "StatefulSet":
			name = strictInto(t, doc, o.statefulSets)
		case "HorizontalPodAutoscaler":
			name = strictInto(t, doc, o.hpas)
		case "PodDisruptionBudget":
			name = strictInto(t, doc, o.pdbs)
		case "Namespace":
			name = strictInto(t, doc, o.namespaces)
		default:
			t.Fatalf("kind %s/%s: not one this test knows; add it to decode", meta.APIVersion, meta.Kind)
		}
		if name == "" {
			t.Errorf("a %s without a name", meta.Kind)
		}
	}
	return o
}

// named is what every API object has: its ObjectMeta.
type named interface{ GetName() string }

// strictInto decodes doc into a new T, refusing unknown fields, and files it by name.
func strictInto[T any, P interface {
	*T
	named
}](t *testing.T, doc []byte, into map[string]P) string {
	t.Helper()
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatalf("yaml to json: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	p := P(new(T))
	if err := dec.Decode(p); err != nil {
		t.Fatalf("decode strictly: %v\n%s", err, doc)
	}
	into[p.GetName()] = p
	return p.GetName()
}

func TestExampleOverlay(t *testing.T) {
	o := build(t, "overlays/example")
	if len(o.deployments) == 0 || len(o.statefulSets) == 0 {
		t.Fatalf("deployments=%d statefulSets=%d, want both", len(o.deployments), len(o.statefulSets))
	}
	for _, w := range o.workloads() {
		checkWorkload(t, o, w)
	}
	checkServices(t, o)
	checkBudgets(t, o)
	checkAutoscalers(t, o)
	for _, want := range []string{"postgres", "accelerated"} {
		if _, ok := o.statefulSets[want]; !ok {
			t.Errorf("statefulset %s missing", want)
		}
	}
	if _, ok := o.deployments["materialized"]; !ok {
		t.Error("deployment materialized missing")
	}
}

func TestBaseBuilds(t *testing.T) {
	o := build(t, "base")
	if got, want := len(o.secrets), 0; got != want {
		t.Errorf("base creates %d secrets, want %d: secrets come from an overlay", got, want)
	}
}

// TestCopiesMatchRepository keeps the base's copies of the spicepods and init.sql
// equal to the repository's (kustomize reads only files under its root).
func TestCopiesMatchRepository(t *testing.T) {
	for copy, orig := range map[string]string{
		"base/spicepods/accelerated.yaml":  "../../spicepods/accelerated/spicepod.yaml",
		"base/spicepods/materialized.yaml": "../../spicepods/materialized/spicepod.yaml",
		"base/init.sql":                    "../../init.sql",
	} {
		a, err := os.ReadFile(copy)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(orig)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from %s: cp %s %s", copy, orig, orig, filepath.Join("deploy/kubernetes", copy))
		}
	}
}

func checkWorkload(t *testing.T, o *objects, w workload) {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(w.selector)
	if err != nil || sel.Empty() {
		t.Errorf("%s %s: selector %v: %v", w.kind, w.name, w.selector, err)
		return
	}
	if !sel.Matches(labels.Set(w.template.Labels)) {
		t.Errorf("%s %s: selector %v does not match its pod labels %v", w.kind, w.name, sel, w.template.Labels)
	}
	spec := w.template.Spec
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			if _, ok := o.configMaps[v.ConfigMap.Name]; !ok {
				t.Errorf("%s %s: volume %s: configmap %s does not exist", w.kind, w.name, v.Name, v.ConfigMap.Name)
			}
		}
		if v.Secret != nil {
			if _, ok := o.secrets[v.Secret.SecretName]; !ok {
				t.Errorf("%s %s: volume %s: secret %s does not exist", w.kind, w.name, v.Name, v.Secret.SecretName)
			}
		}
	}
	for _, c := range spec.Containers {
		where := fmt.Sprintf("%s %s container %s", w.kind, w.name, c.Name)
		if c.Image == "" {
			t.Errorf("%s: no image", where)
		}
		checkEnv(t, o, where, c)
		checkProbes(t, where, c)
		checkMounts(t, where, spec, c)
		checkMemory(t, where, c)
		checkSpicepodEnv(t, o, where, spec, c)
	}
}

func checkEnv(t *testing.T, o *objects, where string, c corev1.Container) {
	t.Helper()
	defined := map[string]bool{}
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	for _, e := range c.Env {
		for _, m := range ref.FindAllStringSubmatch(e.Value, -1) {
			if !defined[m[1]] {
				t.Errorf("%s: env %s uses $(%s), which is not defined before it", where, e.Name, m[1])
			}
		}
		defined[e.Name] = true
		if e.ValueFrom == nil {
			continue
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil {
			s, ok := o.secrets[r.Name]
			if !ok {
				t.Errorf("%s: env %s: secret %s does not exist", where, e.Name, r.Name)
			} else if _, ok := s.Data[r.Key]; !ok {
				t.Errorf("%s: env %s: secret %s has no key %s", where, e.Name, r.Name, r.Key)
			}
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
			cm, ok := o.configMaps[r.Name]
			if !ok {
				t.Errorf("%s: env %s: configmap %s does not exist", where, e.Name, r.Name)
			} else if _, ok := cm.Data[r.Key]; !ok {
				t.Errorf("%s: env %s: configmap %s has no key %s", where, e.Name, r.Name, r.Key)
			}
		}
	}
}

// hasPort reports whether the container declares the port p (by name or number).
func hasPort(c corev1.Container, name string, number int32) bool {
	for _, cp := range c.Ports {
		if (name != "" && cp.Name == name) || (name == "" && cp.ContainerPort == number) {
			return true
		}
	}
	return false
}

func checkProbes(t *testing.T, where string, c corev1.Container) {
	t.Helper()
	probes := map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe, "startup": c.StartupProbe}
	if c.ReadinessProbe == nil {
		t.Errorf("%s: no readiness probe", where)
	}
	for kind, p := range probes {
		if p == nil || p.HTTPGet == nil {
			continue
		}
		port := p.HTTPGet.Port
		if !hasPort(c, port.StrVal, port.IntVal) {
			t.Errorf("%s: %s probe port %s is not a container port", where, kind, port.String())
		}
		if !strings.HasPrefix(p.HTTPGet.Path, "/") {
			t.Errorf("%s: %s probe path %q", where, kind, p.HTTPGet.Path)
		}
	}
}

func checkMounts(t *testing.T, where string, spec corev1.PodSpec, c corev1.Container) {
	t.Helper()
	vols := map[string]bool{}
	for _, v := range spec.Volumes {
		vols[v.Name] = true
	}
	for _, m := range c.VolumeMounts {
		if !vols[m.Name] && m.Name != "data" { // "data" comes from volumeClaimTemplates
			t.Errorf("%s: mount %s: no such volume", where, m.Name)
		}
	}
}

// checkMemory wants a memory limit on every container and, for the runtime, a
// --memory-limit below it (DuckDB and the caches live inside the container's).
func checkMemory(t *testing.T, where string, c corev1.Container) {
	t.Helper()
	limit, ok := c.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		t.Errorf("%s: no memory limit", where)
		return
	}
	if _, ok := c.Resources.Requests[corev1.ResourceMemory]; !ok {
		t.Errorf("%s: no memory request", where)
	}
	for i, a := range c.Args {
		if a != "--memory-limit" || i+1 >= len(c.Args) {
			continue
		}
		q, err := resource.ParseQuantity(strings.TrimSuffix(c.Args[i+1], "B"))
		if err != nil {
			t.Errorf("%s: --memory-limit %q: %v", where, c.Args[i+1], err)
			continue
		}
		if q.Cmp(limit) >= 0 {
			t.Errorf("%s: --memory-limit %s is not below the container's limit %s", where, c.Args[i+1], limit.String())
		}
	}
	if strings.Contains(c.Image, "runtime") && !contains(c.Args, "--memory-limit") {
		t.Errorf("%s: the runtime has no --memory-limit", where)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// checkSpicepodEnv wants every ${env:NAME} of a mounted spicepod defined in the
// container's environment (as NAME or SPICE_NAME, the runtime's env store).
func checkSpicepodEnv(t *testing.T, o *objects, where string, spec corev1.PodSpec, c corev1.Container) {
	t.Helper()
	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = true
	}
	ref := regexp.MustCompile(`\$\{\s*env:([A-Za-z_][A-Za-z0-9_]*)\s*\}`)
	for _, v := range spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		cm := o.configMaps[v.ConfigMap.Name]
		if cm == nil {
			continue
		}
		for key, text := range cm.Data {
			for _, m := range ref.FindAllStringSubmatch(stripComments(text), -1) {
				if !env[m[1]] && !env["SPICE_"+m[1]] {
					t.Errorf("%s: %s of configmap %s uses ${env:%s}, which the container does not set", where, key, cm.Name, m[1])
				}
			}
		}
	}
}

func stripComments(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func checkServices(t *testing.T, o *objects) {
	t.Helper()
	for name, s := range o.services {
		sel := labels.SelectorFromSet(s.Spec.Selector)
		var pods []corev1.Container
		for _, w := range o.workloads() {
			if len(s.Spec.Selector) > 0 && sel.Matches(labels.Set(w.template.Labels)) {
				pods = append(pods, w.template.Spec.Containers...)
			}
		}
		if len(pods) == 0 {
			t.Errorf("service %s: selector %v matches no pod template", name, s.Spec.Selector)
			continue
		}
		for _, p := range s.Spec.Ports {
			tp := p.TargetPort
			found := false
			for _, c := range pods {
				if (tp.StrVal != "" && hasPort(c, tp.StrVal, 0)) || (tp.StrVal == "" && hasPort(c, "", max(tp.IntVal, p.Port))) {
					found = true
				}
			}
			if !found {
				t.Errorf("service %s: port %s targets %s, which no selected container declares", name, p.Name, tp.String())
			}
		}
	}
	for name, ss := range o.statefulSets {
		if _, ok := o.services[ss.Spec.ServiceName]; !ok {
			t.Errorf("statefulset %s: serviceName %s does not exist", name, ss.Spec.ServiceName)
		}
	}
}

func checkBudgets(t *testing.T, o *objects) {
	t.Helper()
	for name, p := range o.pdbs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil {
			t.Errorf("pdb %s: %v", name, err)
			continue
		}
		n := 0
		for _, w := range o.workloads() {
			if sel.Matches(labels.Set(w.template.Labels)) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("pdb %s: selector matches %d workloads, want 1", name, n)
		}
	}
	for _, want := range []string{"accelerated", "materialized", "api"} {
		if _, ok := o.pdbs[want]; !ok {
			t.Errorf("no PodDisruptionBudget for %s", want)
		}
	}
}

func checkAutoscalers(t *testing.T, o *objects) {
	t.Helper()
	for name, h := range o.hpas {
		ref := h.Spec.ScaleTargetRef
		var tmpl *corev1.PodTemplateSpec
		switch ref.Kind {
		case "Deployment":
			if d, ok := o.deployments[ref.Name]; ok {
				tmpl = &d.Spec.Template
			}
		case "StatefulSet":
			if s, ok := o.statefulSets[ref.Name]; ok {
				tmpl = &s.Spec.Template
			}
		}
		if tmpl == nil {
			t.Errorf("hpa %s: target %s %s does not exist", name, ref.Kind, ref.Name)
			continue
		}
		for _, c := range tmpl.Spec.Containers {
			if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
				t.Errorf("hpa %s: container %s has no cpu request, so CPU utilization is undefined", name, c.Name)
			}
		}
		if h.Spec.MinReplicas != nil && *h.Spec.MinReplicas > h.Spec.MaxReplicas {
			t.Errorf("hpa %s: minReplicas %d > maxReplicas %d", name, *h.Spec.MinReplicas, h.Spec.MaxReplicas)
		}
	}
}
