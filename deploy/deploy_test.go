package deploy

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// memorydEnv is every environment variable memoryd reads, from its
// configuration's source.
func memorydEnv(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile("../app/config.go")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`"((?:MNEME|NEO4J)_[A-Z0-9_]+|REDIS_URL)"`).FindAllStringSubmatch(string(src), -1) {
		names[m[1]] = true
	}
	if len(names) < 20 || !names["MNEME_KEY_SECRET"] || !names["NEO4J_URI"] {
		t.Fatalf("found only %d variables in app/config.go: the scan is not reading it", len(names))
	}
	return names
}

func decodeAll(t *testing.T, path string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, doc)
	}
}

// at walks a decoded YAML document by keys and list indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return strconv.Itoa(x)
	}
	return ""
}

func TestCompose(t *testing.T) {
	env := memorydEnv(t)
	docs := decodeAll(t, "compose.yaml")
	if len(docs) != 1 {
		t.Fatalf("compose.yaml holds %d documents", len(docs))
	}
	c := docs[0]
	services, _ := c["services"].(map[string]any)
	for name, image := range map[string]string{"neo4j": "neo4j:5", "redis": "redis:7"} {
		if got := str(at(services, name, "image")); !strings.HasPrefix(got, image) {
			t.Errorf("service %s: image %q, want the official %s… image", name, got, image)
		}
	}
	md := services["memoryd"]
	if got := at(md, "deploy", "replicas"); got != 2 {
		t.Errorf("memoryd replicas %v, want 2", got)
	}
	if got := str(at(md, "build", "dockerfile")); got != "deploy/Dockerfile" {
		t.Errorf("memoryd builds from %q", got)
	}
	vars, _ := at(md, "environment").(map[string]any)
	for _, need := range []string{"NEO4J_URI", "NEO4J_PASSWORD", "REDIS_URL", "MNEME_KEY_SECRET", "MNEME_EMBEDDER", "MNEME_EMBED_URL", "MNEME_EMBED_DIM"} {
		if vars[need] == nil {
			t.Errorf("memoryd's environment lacks %s", need)
		}
	}
	for name := range vars {
		if !env[name] {
			t.Errorf("memoryd's environment sets %s, which memoryd does not read", name)
		}
	}
	// Every address memoryd is given names a service of the file.
	for _, name := range []string{"NEO4J_URI", "REDIS_URL", "MNEME_EMBED_URL"} {
		host := regexp.MustCompile(`^[a-z0-9+]+://([^:/]+)`).FindStringSubmatch(str(vars[name]))
		if host == nil || services[host[1]] == nil {
			t.Errorf("%s=%v names no service of compose.yaml", name, vars[name])
		}
	}
	if !strings.Contains(str(at(services, "neo4j", "environment", "NEO4J_AUTH")), "NEO4J_PASSWORD") {
		t.Error("neo4j's password is not the one memoryd is given")
	}
	for name, svc := range services {
		deps, _ := at(svc, "depends_on").(map[string]any)
		for dep := range deps {
			if services[dep] == nil {
				t.Errorf("service %s depends on %s, which does not exist", name, dep)
			}
		}
		for _, d := range asList(at(svc, "depends_on")) {
			if services[str(d)] == nil {
				t.Errorf("service %s depends on %s, which does not exist", name, d)
			}
		}
		if f := str(at(svc, "build", "dockerfile")); f != "" {
			if _, err := os.Stat(filepath.Join("..", f)); err != nil {
				t.Errorf("service %s: %v", name, err)
			}
		}
	}
	if got := str(at(services, "lb", "ports", 0)); !strings.HasSuffix(got, ":8080") {
		t.Errorf("the load balancer publishes %q", got)
	}
	conf, err := os.ReadFile("nginx.conf")
	if err != nil || !strings.Contains(string(conf), "http://memoryd:8080") {
		t.Errorf("nginx.conf does not proxy to the memoryd service: %v", err)
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

func TestKubernetesManifests(t *testing.T) {
	env := memorydEnv(t)
	kust := decodeAll(t, "k8s/kustomization.yaml")[0]
	byKind := map[string]map[string]any{}
	files := append([]string{"secret.example.yaml"}, strSlice(kust["resources"])...)
	for _, f := range files {
		for _, d := range decodeAll(t, filepath.Join("k8s", f)) {
			kind, name := str(d["kind"]), str(at(d, "metadata", "name"))
			if str(d["apiVersion"]) == "" || kind == "" || name == "" {
				t.Errorf("%s: a document without apiVersion, kind and metadata.name", f)
			}
			byKind[kind] = d
		}
	}
	dep := byKind["Deployment"]
	if dep == nil || byKind["Service"] == nil || byKind["ConfigMap"] == nil || byKind["Secret"] == nil {
		t.Fatalf("manifests lack a Deployment, Service, ConfigMap or Secret: %v", slices.Collect(maps.Keys(byKind)))
	}
	if got := at(dep, "spec", "replicas"); got != 2 {
		t.Errorf("replicas %v, want 2", got)
	}
	labels, _ := at(dep, "spec", "template", "metadata", "labels").(map[string]any)
	for _, sel := range []any{at(dep, "spec", "selector", "matchLabels"), at(byKind["Service"], "spec", "selector"), at(byKind["PodDisruptionBudget"], "spec", "selector", "matchLabels")} {
		m, _ := sel.(map[string]any)
		if len(m) == 0 {
			t.Error("an empty selector")
		}
		for k, v := range m {
			if labels[k] != v {
				t.Errorf("selector %s=%v does not match the pods' labels %v", k, v, labels)
			}
		}
	}
	if at(dep, "spec", "template", "spec", "securityContext", "runAsNonRoot") != true {
		t.Error("pods may run as root")
	}
	ctr := at(dep, "spec", "template", "spec", "containers", 0)
	if str(at(ctr, "ports", 0, "name")) != "http" || at(ctr, "ports", 0, "containerPort") != 8080 {
		t.Errorf("container port %v", at(ctr, "ports"))
	}
	if str(at(byKind["Service"], "spec", "ports", 0, "targetPort")) != "http" {
		t.Error("the service does not target the container's http port")
	}
	for probe, path := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz"} {
		if str(at(ctr, probe, "httpGet", "path")) != path || str(at(ctr, probe, "httpGet", "port")) != "http" {
			t.Errorf("%s: %v, want GET %s on http", probe, at(ctr, probe), path)
		}
	}
	for i := range 2 {
		ref := at(ctr, "envFrom", i)
		switch {
		case at(ref, "configMapRef", "name") != nil:
			if at(ref, "configMapRef", "name") != at(byKind["ConfigMap"], "metadata", "name") {
				t.Errorf("envFrom names ConfigMap %v", at(ref, "configMapRef", "name"))
			}
		case at(ref, "secretRef", "name") != nil:
			if at(ref, "secretRef", "name") != at(byKind["Secret"], "metadata", "name") {
				t.Errorf("envFrom names Secret %v", at(ref, "secretRef", "name"))
			}
		default:
			t.Errorf("envFrom %d is neither a ConfigMap nor a Secret", i)
		}
	}
	given := map[string]bool{}
	for _, m := range []any{at(byKind["ConfigMap"], "data"), at(byKind["Secret"], "stringData")} {
		vars, _ := m.(map[string]any)
		for name := range vars {
			given[name] = true
			if !env[name] {
				t.Errorf("the pods get %s, which memoryd does not read", name)
			}
		}
	}
	for _, need := range []string{"NEO4J_URI", "NEO4J_PASSWORD", "REDIS_URL", "MNEME_KEY_SECRET", "MNEME_ADDR"} {
		if !given[need] {
			t.Errorf("the pods are not given %s", need)
		}
	}
}

func strSlice(v any) []string {
	var out []string
	for _, x := range asList(v) {
		out = append(out, str(x))
	}
	return out
}

// TestDockerfileBuildsAStaticBinaryRunAsNonRoot reads the Dockerfile's
// stages: a build stage, then scratch with the binary alone, run as a user
// other than root, built without cgo.
func TestDockerfileBuildsAStaticBinaryRunAsNonRoot(t *testing.T) {
	raw, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	src := regexp.MustCompile(`\\\n`).ReplaceAllString(string(raw), " ")
	var froms, users []string
	var build string
	for _, line := range strings.Split(src, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, line)
		case "USER":
			if len(froms) > 1 {
				users = append(users, f[1])
			}
		case "RUN":
			if i := strings.Index(line, "go build"); i >= 0 && build == "" {
				build = line[i:]
				if j := strings.Index(build, "&&"); j >= 0 {
					build = build[:j]
				}
			}
		}
	}
	if len(froms) < 2 || !strings.Contains(src, "COPY --from=build") {
		t.Errorf("not a multi-stage build: %q", froms)
	}
	if !strings.Contains(froms[len(froms)-1], "scratch") {
		t.Errorf("the final stage is %q, want scratch: the static binary alone", froms[len(froms)-1])
	}
	if len(users) != 1 || strings.HasPrefix(users[0], "0") || strings.HasPrefix(users[0], "root") {
		t.Errorf("the final stage runs as %v, want one non-root USER", users)
	}
	if !strings.Contains(src, "CGO_ENABLED=0") || !strings.Contains(build, "./cmd/memoryd") {
		t.Fatalf("the build is %q without CGO_ENABLED=0", build)
	}

	// Every package memoryd is built from must build without cgo, so that
	// the binary links statically and runs from scratch. (go list answers
	// in a second; the build itself is docker's, which is not run here.)
	cmd := exec.Command("go", "list", "-e", "-deps", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}{{if .CgoFiles}}{{.ImportPath}} uses cgo{{end}}", "./cmd/memoryd", "./cmd/memctl")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, b)
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		t.Errorf("without cgo, memoryd's packages do not build:\n%s", s)
	}
}
