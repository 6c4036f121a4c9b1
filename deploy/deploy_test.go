package deploy

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/web"
)

// knownVars are the LEASHD_ variables leashd reads, with defaults, from
// leashd.env.example (cmd/leashd's TestEnvExampleListsEveryChatApp keeps
// it equal to what leashd itself would write).
func knownVars(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("leashd.env.example")
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "#"), "="); ok && strings.HasPrefix(k, "LEASHD_") {
			out[k] = v
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return out
}

// --- Kubernetes --------------------------------------------------------------

type object struct {
	path string
	doc  map[string]any
}

func (o object) kind() string { s, _ := o.doc["kind"].(string); return s }
func (o object) name() string { return str(dig(o.doc, "metadata", "name")) }

func dig(v any, path ...any) any {
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
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

func manifests(t *testing.T) []object {
	t.Helper()
	files, err := filepath.Glob("k8s/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []object
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var doc map[string]any
			err := dec.Decode(&doc)
			if err != nil {
				require.ErrorContains(t, err, "EOF", f)
				break
			}
			require.NotEmpty(t, doc["apiVersion"], "%s: apiVersion", f)
			require.NotEmpty(t, doc["kind"], "%s: kind", f)
			out = append(out, object{path: f, doc: doc})
		}
	}
	return out
}

func find(t *testing.T, objs []object, kind, name string) object {
	t.Helper()
	for _, o := range objs {
		if o.kind() == kind && (name == "" || o.name() == name) {
			return o
		}
	}
	t.Fatalf("no %s %q in deploy/k8s", kind, name)
	return object{}
}

// TestKubernetesManifests checks deploy/k8s against leashd: one pod that
// stops before the next starts, probes on leashd's port, configuration
// leashd accepts, the database on the volume claim, a hardened container
// and a Service that reaches it.
func TestKubernetesManifests(t *testing.T) {
	objs := manifests(t)
	known := knownVars(t)
	k8sKustomizationListsAll(t, objs)

	dep := find(t, objs, "Deployment", "leashd")
	assert.Equal(t, 1, dig(dep.doc, "spec", "replicas"), "exactly one leashd (Telegram polling and SQLite allow one)")
	assert.Equal(t, "Recreate", dig(dep.doc, "spec", "strategy", "type"), "the old pod must stop before the new one starts")
	pod := dig(dep.doc, "spec", "template", "spec")
	containers := dig(pod, "containers").([]any)
	require.Len(t, containers, 1)
	c := containers[0]

	port := k8sProbes(t, c)
	env, sec := k8sEnv(t, objs, c, known, port)
	k8sPlaceholderTokenRefused(t, env, sec)
	k8sStorage(t, objs, pod, c, env)

	// Hardening.
	assert.Equal(t, false, dig(c, "securityContext", "allowPrivilegeEscalation"))
	assert.Equal(t, true, dig(c, "securityContext", "readOnlyRootFilesystem"))
	assert.Equal(t, true, dig(pod, "securityContext", "runAsNonRoot"))

	// Kubernetes waits longer than leashd's own shutdown bound.
	shutdown, err := strconv.Atoi(env["LEASHD_SHUTDOWN_TIMEOUT_SECONDS"])
	require.NoError(t, err)
	assert.Greater(t, dig(pod, "terminationGracePeriodSeconds"), shutdown)

	// The Service reaches the named port, and selects the pod.
	svc := find(t, objs, "Service", "leashd")
	assert.Equal(t, "http", dig(svc.doc, "spec", "ports", 0, "targetPort"))
	for k, v := range dig(svc.doc, "spec", "selector").(map[string]any) {
		assert.Equal(t, v, dig(dep.doc, "spec", "template", "metadata", "labels", k))
		assert.Equal(t, v, dig(dep.doc, "spec", "selector", "matchLabels", k))
	}
}

// k8sKustomizationListsAll checks that the Kustomization lists every other
// file.
func k8sKustomizationListsAll(t *testing.T, objs []object) {
	kust := find(t, objs, "Kustomization", "")
	var listed []string
	for _, r := range dig(kust.doc, "resources").([]any) {
		listed = append(listed, "k8s/"+str(r))
	}
	for _, o := range objs {
		if o.kind() != "Kustomization" {
			assert.Contains(t, listed, o.path, "kustomization.yaml must list %s", o.path)
		}
	}
}

// k8sProbes checks that the probes hit the health endpoints on the named
// container port, which is the port leashd listens on; it returns the port.
func k8sProbes(t *testing.T, c any) int {
	require.Equal(t, "http", dig(c, "ports", 0, "name"))
	port := dig(c, "ports", 0, "containerPort").(int)
	assert.Equal(t, "/healthz", dig(c, "livenessProbe", "httpGet", "path"))
	assert.Equal(t, "http", dig(c, "livenessProbe", "httpGet", "port"))
	assert.Equal(t, "/readyz", dig(c, "readinessProbe", "httpGet", "path"))
	assert.Equal(t, "http", dig(c, "readinessProbe", "httpGet", "port"))
	assert.Equal(t, "/healthz", dig(c, "startupProbe", "httpGet", "path"))
	return port
}

// k8sEnv returns the container's environment from its ConfigMap and Secret,
// and the Secret. Every key is a real variable; the web address listens
// beyond loopback on the container port, so the Secret holds the token.
func k8sEnv(t *testing.T, objs []object, c any, known map[string]string, port int) (map[string]string, object) {
	cm := find(t, objs, "ConfigMap", str(dig(c, "envFrom", 0, "configMapRef", "name")))
	sec := find(t, objs, "Secret", str(dig(c, "envFrom", 1, "secretRef", "name")))
	env := map[string]string{}
	for k, v := range dig(cm.doc, "data").(map[string]any) {
		require.Contains(t, known, k, "ConfigMap key %s is not a LEASHD_ variable", k)
		env[k] = str(v)
	}
	for k, v := range dig(sec.doc, "stringData").(map[string]any) {
		require.Contains(t, known, k, "Secret key %s is not a LEASHD_ variable", k)
		env[k] = str(v)
	}
	host, p, err := net.SplitHostPort(env["LEASHD_WEB_ADDR"])
	require.NoError(t, err)
	assert.Equal(t, "0.0.0.0", host, "probes come from the kubelet, not loopback")
	assert.Equal(t, strconv.Itoa(port), p)
	assert.NotEmpty(t, env["LEASHD_WEB_TOKEN"], "a non-loopback web address needs LEASHD_WEB_TOKEN")
	return env, sec
}

// k8sPlaceholderTokenRefused checks that the configuration as the pod would
// see it (with the pod's directories swapped for temporary ones) is refused
// while the Secret holds its placeholder token, naming the variable and the
// rule, and passes leashd's validation once the token is what secret.yaml
// says to put there.
func k8sPlaceholderTokenRefused(t *testing.T, env map[string]string, sec object) {
	cfg := config.Defaults()
	webCfg := web.Config{Addr: env["LEASHD_WEB_ADDR"], Token: env["LEASHD_WEB_TOKEN"], MaxStreams: web.DefaultMaxStreams}
	cfg.LogFormat, cfg.LogLevel = env["LEASHD_LOG_FORMAT"], env["LEASHD_LOG_LEVEL"]
	cfg.Workdir = t.TempDir()
	err := errors.Join(cfg.Validate(), webCfg.Validate())
	require.Error(t, err, "leashd must refuse to start with the Secret's placeholder token %q", env["LEASHD_WEB_TOKEN"])
	assert.Contains(t, err.Error(), `LEASHD_WEB_TOKEN="…" is invalid`)
	assert.Contains(t, err.Error(), "16 or more random characters")
	secretText, err := os.ReadFile(sec.path)
	require.NoError(t, err)
	assert.Contains(t, string(secretText), "openssl rand -hex 32", "secret.yaml says how to make a token")
	webCfg.Token = "3f9c2a7be1d04c58a6f1e2d3c4b5a697" // what openssl rand -hex 16 prints
	require.NoError(t, errors.Join(cfg.Validate(), webCfg.Validate()))
}

// k8sStorage checks that the database lives on the PersistentVolumeClaim,
// the working directory on its own volume and /tmp is writable.
func k8sStorage(t *testing.T, objs []object, pod, c any, env map[string]string) {
	mounts := map[string]string{}
	for _, m := range dig(c, "volumeMounts").([]any) {
		mounts[str(dig(m, "name"))] = str(dig(m, "mountPath"))
	}
	var pvcVolume string
	for _, v := range dig(pod, "volumes").([]any) {
		if claim := str(dig(v, "persistentVolumeClaim", "claimName")); claim != "" {
			find(t, objs, "PersistentVolumeClaim", claim)
			pvcVolume = str(dig(v, "name"))
		}
	}
	require.NotEmpty(t, pvcVolume, "a volume from the PVC")
	// In a directory of its own on the PVC: kubelet gives the volume's
	// root group access (fsGroup), which leashd refuses for its state.
	assert.Equal(t, mounts[pvcVolume], filepath.Dir(filepath.Dir(env["LEASHD_DB_PATH"])), "LEASHD_DB_PATH must be in a directory on the PVC")
	assert.Equal(t, "OnRootMismatch", str(dig(pod, "securityContext", "fsGroupChangePolicy")),
		"kubelet must not give the group access to the state directory at every mount")
	assert.Equal(t, "/workspace", env["LEASHD_WORKDIR"])
	assert.Contains(t, mounts, "workspace")
	assert.Equal(t, "/workspace", mounts["workspace"])
	assert.Equal(t, "/tmp", mounts["tmp"], "a writable /tmp with a read-only root")
	pvc := find(t, objs, "PersistentVolumeClaim", "")
	assert.Equal(t, []any{"ReadWriteOnce"}, dig(pvc.doc, "spec", "accessModes"))
}

// --- Compose -----------------------------------------------------------------

func TestCompose(t *testing.T) {
	b, err := os.ReadFile("compose.yaml")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(b, &doc))
	svc := dig(doc, "services", "leashd")
	require.NotNil(t, svc)
	known := knownVars(t)

	ctxDir := str(dig(svc, "build", "context"))
	df := filepath.Join(ctxDir, str(dig(svc, "build", "dockerfile")))
	assert.FileExists(t, df, "build.dockerfile is relative to build.context")
	assert.FileExists(t, filepath.Join(ctxDir, "go.mod"), "the build context is the module root")
	assert.Equal(t, "leashd.env", str(dig(svc, "env_file", 0, "path")))

	env := map[string]string{}
	for k, v := range dig(svc, "environment").(map[string]any) {
		if strings.HasPrefix(k, "LEASHD_") {
			require.Contains(t, known, k)
		}
		env[k] = str(v)
		// environment: wins over env_file. A value taken from the shell
		// (${X:-}) replaces what leashd.env sets with whatever the shell
		// has, usually nothing: ANTHROPIC_API_KEY never reached the CLI.
		assert.NotContains(t, str(v), "$", "compose.yaml environment.%s interpolates the shell and overrides leashd.env", k)
	}
	assert.NotContains(t, env, "ANTHROPIC_API_KEY", "the API key comes from leashd.env (env_file); environment: would override it")
	example, err := os.ReadFile("leashd.env.example")
	require.NoError(t, err)
	assert.Contains(t, string(example), "\n#ANTHROPIC_API_KEY=\n", "leashd.env.example shows where the Claude Code CLI's key goes")
	_, p, err := net.SplitHostPort(env["LEASHD_WEB_ADDR"])
	require.NoError(t, err)
	published := str(dig(svc, "ports", 0))
	assert.True(t, strings.HasPrefix(published, "127.0.0.1:"), "publish on loopback only: %s", published)
	assert.True(t, strings.HasSuffix(published, ":"+p), "the published container port is leashd's: %s", published)

	vols := map[string]bool{}
	for _, v := range dig(svc, "volumes").([]any) {
		_, target, _ := strings.Cut(str(v), ":")
		vols[target] = true
	}
	assert.True(t, vols[filepath.Dir(env["LEASHD_DB_PATH"])], "the database directory is a volume")
	assert.True(t, vols[env["LEASHD_WORKDIR"]])
	assert.Equal(t, true, dig(svc, "read_only"))
	grace, err := time.ParseDuration(str(dig(svc, "stop_grace_period")))
	require.NoError(t, err)
	assert.Greater(t, grace, config.Defaults().ShutdownTimeout())

	// The target names exist in the Dockerfile.
	stages := dockerStages(t)
	assert.Contains(t, stages, "leashd")
	assert.Contains(t, stages, "claude")
	assert.Contains(t, str(dig(svc, "build", "target")), ":-leashd}")
}

// --- systemd -----------------------------------------------------------------

func unitDirectives(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("leashd.service")
	require.NoError(t, err)
	out := map[string][]string{}
	section := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok, "not key=value: %q", line)
			out[section+"."+k] = append(out[section+"."+k], v)
		}
	}
	return out
}

func TestSystemdUnitIsHardened(t *testing.T) {
	d := unitDirectives(t)
	for k, v := range map[string]string{
		"Service.DynamicUser":     "yes",
		"Service.StateDirectory":  "leashd",
		"Service.ProtectSystem":   "strict",
		"Service.ProtectHome":     "yes",
		"Service.NoNewPrivileges": "yes",
		"Service.PrivateTmp":      "yes",
		"Service.EnvironmentFile": "/etc/leashd/leashd.env",
		"Service.KillSignal":      "SIGTERM",
		"Service.ExecStart":       "/usr/local/bin/leashd",
		"Install.WantedBy":        "multi-user.target",
	} {
		assert.Equal(t, []string{v}, d[k], k)
	}
	env := map[string]string{}
	for _, e := range d["Service.Environment"] {
		k, v, _ := strings.Cut(e, "=")
		env[k] = v
	}
	assert.Equal(t, "/var/lib/leashd/leashd.db", env["LEASHD_DB_PATH"], "the database in the StateDirectory, the only writable place")
	assert.True(t, strings.HasPrefix(env["LEASHD_WORKDIR"], "/var/lib/leashd/"))
	stop, err := time.ParseDuration(d["Service.TimeoutStopSec"][0])
	require.NoError(t, err)
	assert.Greater(t, stop, config.Defaults().ShutdownTimeout(), "systemd must wait longer than leashd's own shutdown bound")
}

// TestSystemdUnitVerifies installs the unit as deploy/README.md says (its
// install commands, run into a scratch root) and has systemd-analyze verify
// it there, unchanged: ExecStart must be where the README installs the
// binary, and verify must print nothing.
func TestSystemdUnitVerifies(t *testing.T) {
	sa := testenv.Require(t, "LEASHD_TEST_SYSTEMD_ANALYZE", "systemd-analyze") // Debian's systemd; .ci/test installs it
	root := t.TempDir()
	installs := documentedInstalls(t)
	require.NotEmpty(t, installs, "deploy/README.md's systemd section has no install commands")
	self, err := os.Executable()
	require.NoError(t, err)
	for _, in := range installs {
		dst := filepath.Join(root, in.dst)
		if in.dir {
			require.NoError(t, os.MkdirAll(dst, in.mode))
			continue
		}
		src := in.src
		switch {
		case src == "leashd": // the binary the README builds: any executable does for verify
			src = self
		case strings.HasPrefix(src, "deploy/"):
			src = strings.TrimPrefix(src, "deploy/")
		default:
			t.Fatalf("deploy/README.md installs %q, which is neither the binary nor a file in deploy/", in.src)
		}
		b, err := os.ReadFile(src)
		require.NoError(t, err, "deploy/README.md installs %s", in.src)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, b, in.mode))
	}
	const unit = "/etc/systemd/system/leashd.service"
	require.FileExists(t, filepath.Join(root, unit), "deploy/README.md installs the unit to %s", unit)
	exec0 := unitDirectives(t)["Service.ExecStart"][0]
	require.FileExists(t, filepath.Join(root, strings.Fields(exec0)[0]), "ExecStart=%s is not where deploy/README.md installs leashd", exec0)

	// What verify needs from the system besides leashd: the unit's targets
	// and the other programs it runs.
	hostUnits := "/usr/lib/systemd/system"
	if _, err := os.Stat(hostUnits); err != nil {
		hostUnits = "/lib/systemd/system"
	}
	copyTree(t, hostUnits, filepath.Join(root, "usr/lib/systemd/system"))
	for k, vs := range unitDirectives(t) {
		if !strings.HasPrefix(k, "Service.Exec") || k == "Service.ExecStart" {
			continue
		}
		for _, v := range vs {
			prog := strings.TrimLeft(strings.Fields(v)[0], "-+!@:")
			b, err := os.ReadFile(prog)
			require.NoError(t, err, "%s=%s: the program is missing on this machine too", k, v)
			require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(prog)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, prog), b, 0o755))
		}
	}

	out, err := exec.Command(sa, "verify", "--root="+root, unit).CombinedOutput()
	require.NoError(t, err, "%s", out)
	// verify exits 0 on unknown keys and bad values; it only warns.
	assert.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify warnings")

	// The check has teeth: without the binary at the documented place,
	// verify fails.
	require.NoError(t, os.Remove(filepath.Join(root, strings.Fields(exec0)[0])))
	out, err = exec.Command(sa, "verify", "--root="+root, unit).CombinedOutput()
	require.Error(t, err, "verify passed without %s:\n%s", exec0, out)
	assert.Contains(t, string(out), "is not executable")

	// The offline security analysis rates the sandbox (0 = best, 10 = none;
	// --threshold is in tenths).
	out, err = exec.Command(sa, "security", "--offline=yes", "--threshold=20", "--no-pager", "--root="+root, unit).CombinedOutput()
	require.NoError(t, err, "exposure above 2.0:\n%s", out)
	m := regexp.MustCompile(`Overall exposure level for leashd\.service: ([0-9.]+)`).FindSubmatch(out)
	require.NotNil(t, m, "%s", out)
	t.Logf("systemd-analyze security exposure: %s", m[1])
}

// install is one `install` command of deploy/README.md.
type install struct {
	src, dst string
	dir      bool
	mode     os.FileMode
}

// documentedInstalls reads the install commands of the systemd section of
// deploy/README.md.
func documentedInstalls(t *testing.T) []install {
	t.Helper()
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## systemd\n")
	require.True(t, ok, "deploy/README.md has no systemd section")
	section, _, _ = strings.Cut(section, "\n## ")
	var out []install
	for line := range strings.SplitSeq(section, "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "sudo" {
			f = f[1:]
		}
		if len(f) == 0 || f[0] != "install" {
			continue
		}
		in := install{mode: 0o755}
		var args []string
		for i := 1; i < len(f); i++ {
			switch f[i] {
			case "-d":
				in.dir = true
			case "-m":
				i++
				m, err := strconv.ParseUint(f[i], 8, 32)
				require.NoError(t, err, line)
				in.mode = os.FileMode(m)
			default:
				args = append(args, f[i])
			}
		}
		if in.dir {
			require.Len(t, args, 1, line)
			in.dst = args[0]
		} else {
			require.Len(t, args, 2, line)
			in.src, in.dst = args[0], args[1]
		}
		out = append(out, in)
	}
	return out
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		}
		return nil
	})
	require.NoError(t, err)
}

// --- Dockerfile --------------------------------------------------------------

type stage struct {
	from  string
	lines []string
}

func dockerfile(t *testing.T) (args map[string]string, stages map[string]*stage, order []string) {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	// Join continuation lines.
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	args = map[string]string{}
	stages = map[string]*stage{}
	var cur *stage
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(instr) {
		case "FROM":
			f := strings.Fields(rest)
			require.Len(t, f, 3, "FROM image AS name: %q", line)
			cur = &stage{from: f[0]}
			stages[f[2]] = cur
			order = append(order, f[2])
		case "ARG":
			if cur == nil {
				k, v, _ := strings.Cut(rest, "=")
				args[k] = v
			}
		}
		if cur != nil {
			cur.lines = append(cur.lines, line)
		}
	}
	return args, stages, order
}

func dockerStages(t *testing.T) map[string]*stage {
	_, s, _ := dockerfile(t)
	return s
}

func readVersions(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../.ci/versions.env")
	require.NoError(t, err)
	out := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}

// buildCommand returns the Dockerfile's go build line.
func buildCommand(t *testing.T, st *stage) string {
	t.Helper()
	for _, l := range st.lines {
		if strings.HasPrefix(l, "RUN ") && strings.Contains(l, "go build") {
			return strings.TrimPrefix(l, "RUN ")
		}
	}
	t.Fatal("no RUN ... go build in the build stage")
	return ""
}

func TestDockerfile(t *testing.T) {
	args, stages, order := dockerfile(t)
	require.Equal(t, []string{"build", "claude", "leashd"}, order, "the static image is the last stage, so the default target")

	// The Go version is the module's.
	gomod, err := os.ReadFile("../go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	require.NotNil(t, m)
	assert.Equal(t, string(m[1]), args["GO_VERSION"])
	assert.Equal(t, "golang:${GO_VERSION}", stages["build"].from)

	// The Claude Code CLI is the version the tests use.
	v := readVersions(t)["CLAUDE_CODE_VERSION"]
	require.NotEmpty(t, v)
	assert.Equal(t, v, args["CLAUDE_CODE_VERSION"], "deploy/Dockerfile and .ci/versions.env disagree")
	assert.Equal(t, "node:22-slim", stages["claude"].from)
	assert.Contains(t, strings.Join(stages["claude"].lines, "\n"), "npm install -g @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}")
	// The CLI writes its sessions under $HOME/.claude; compose and the
	// Deployment make the root filesystem read-only, so HOME must be the
	// data volume or --resume loses the conversation at every restart.
	assert.Regexp(t, `(?m)\bHOME=/data\s*$`, strings.Join(stages["claude"].lines, "\n"), "the claude image keeps HOME on the /data volume")

	assert.True(t, strings.HasPrefix(stages["leashd"].from, "gcr.io/distroless/static"), stages["leashd"].from)
	for _, name := range []string{"leashd", "claude"} {
		all := strings.Join(stages[name].lines, "\n")
		assert.Contains(t, all, "COPY --from=build /out/leashd /usr/local/bin/leashd", name)
		assert.Contains(t, all, `ENTRYPOINT ["/usr/local/bin/leashd"]`, name)
		assert.Contains(t, all, "LEASHD_WEB_ADDR=0.0.0.0:8080", name)
		assert.Contains(t, all, "LEASHD_DB_PATH=/data/leashd.db", name)
		assert.Contains(t, all, "USER ", name)
	}

	cmd := buildCommand(t, stages["build"])
	assert.Contains(t, cmd, "CGO_ENABLED=0")
	assert.Contains(t, cmd, "-o /out/leashd ./cmd/leashd")
}

// TestDockerfileBuildCommandMakesAStaticBinary runs the Dockerfile's own go
// build line here and checks the result runs without a C library (the
// distroless/static image has none) and answers -h.
func TestDockerfileBuildCommandMakesAStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building cmd/leashd")
	}
	_, stages, _ := dockerfile(t)
	cmdline := buildCommand(t, stages["build"])
	out := filepath.Join(t.TempDir(), "leashd")
	cmdline = strings.Replace(cmdline, "-o /out/leashd", "-o "+out, 1)
	sh := exec.Command("sh", "-c", cmdline)
	// In the build context Docker would send: the repository minus what
	// .dockerignore keeps out.
	sh.Dir = buildContext(t)
	sh.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	b, err := sh.CombinedOutput()
	require.NoError(t, err, "%s\n%s", cmdline, b)

	f, err := elf.Open(out)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "the binary asks for a dynamic loader")
	}
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	assert.Empty(t, libs, "dynamic libraries")

	help := exec.Command(out, "-h")
	help.Env = []string{} // nothing: like a fresh container
	b, err = help.CombinedOutput()
	require.NoError(t, err, "%s", b)
	assert.Contains(t, string(b), "LEASHD_WEB_ADDR")
}

// dockerignore is .dockerignore read the way Docker reads it: patterns
// relative to the context root, * and ? within one path element, ** across
// any number, a pattern matching a directory excludes what is in it, ! lets
// a path back in, and the last matching pattern decides.
type dockerignore []struct {
	re     *regexp.Regexp
	negate bool
}

func readDockerignore(t *testing.T) dockerignore {
	t.Helper()
	b, err := os.ReadFile("../.dockerignore")
	require.NoError(t, err, "the repository root needs a .dockerignore: the build context is the whole checkout")
	var out dockerignore
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		negate := strings.HasPrefix(line, "!")
		pat := filepath.Clean(strings.TrimPrefix(strings.TrimPrefix(line, "!"), "/"))
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(pat); i++ {
			switch {
			case strings.HasPrefix(pat[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(pat[i:], "**"):
				re.WriteString(".*")
				i++
			case pat[i] == '*':
				re.WriteString("[^/]*")
			case pat[i] == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(pat[i : i+1]))
			}
		}
		re.WriteString("$")
		out = append(out, struct {
			re     *regexp.Regexp
			negate bool
		}{regexp.MustCompile(re.String()), negate})
	}
	return out
}

// excludes reports whether the context leaves out path (slash-separated,
// relative to the repository root).
func (d dockerignore) excludes(path string) bool {
	excluded := false
	for _, p := range d {
		match := false
		for prefix := path; ; {
			if p.re.MatchString(prefix) {
				match = true
				break
			}
			i := strings.LastIndexByte(prefix, '/')
			if i < 0 {
				break
			}
			prefix = prefix[:i]
		}
		if match {
			excluded = !p.negate
		}
	}
	return excluded
}

// buildContext copies the repository as Docker's build context would hold
// it into a temporary directory.
func buildContext(t *testing.T) string {
	t.Helper()
	ign := readDockerignore(t)
	dir := t.TempDir()
	err := filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel("..", p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if ign.excludes(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	require.NoError(t, err)
	return dir
}

// TestDockerignore: the build context leaves out the git history, secrets
// and state a checkout may hold, and keeps every file go build needs for
// cmd/leashd (TestDockerfileBuildCommandMakesAStaticBinary builds from it).
func TestDockerignore(t *testing.T) {
	ign := readDockerignore(t)
	for _, p := range []string{
		".git", ".git/config", ".ci/test", "deploy/leashd.env", ".env", "leashd.db", "state/leashd.db-wal",
		"leashd.db.lock", "config/config_test.go", "engine/sqlite/testdata/old.db", "leashd", "x/node_modules/a.js",
	} {
		assert.True(t, ign.excludes(p), ".dockerignore lets %s into the build context", p)
	}
	for _, p := range []string{"go.mod", "go.sum", "cmd/leashd/main.go", "deploy/Dockerfile", "deploy/leashd.env.example", "connectors/web/static/index.html"} {
		assert.False(t, ign.excludes(p), ".dockerignore keeps %s out of the build context", p)
	}

	// Every file of the module that building cmd/leashd reads.
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{if .Module}}{{if .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}{{end}}`,
		"../cmd/leashd").Output()
	require.NoError(t, err)
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	files := strings.Fields(string(out))
	require.NotEmpty(t, files)
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		require.NoError(t, err)
		assert.False(t, ign.excludes(filepath.ToSlash(rel)), ".dockerignore keeps %s out, but go build needs it", rel)
	}
}

// TestDockerImageBuilds builds the default image when a Docker daemon is
// reachable.
func TestDockerImageBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building images")
	}
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("docker not installed: the image is not built")
	}
	if out, err := exec.Command(docker, "info").CombinedOutput(); err != nil {
		t.Skipf("no Docker daemon (%v): the image is not built\n%s", err, lastLine(out))
	}
	build := exec.Command(docker, "build", "-f", "deploy/Dockerfile", "-t", "leashd:test", ".")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(docker, "run", "--rm", "leashd:test", "-h").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "LEASHD_WEB_ADDR")
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestComposeConfigValidates asks Docker Compose itself to parse and
// interpolate compose.yaml when the plugin is installed.
func TestComposeConfigValidates(t *testing.T) {
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("docker not installed: compose.yaml is checked only by TestCompose")
	}
	if out, err := exec.Command(docker, "compose", "version").CombinedOutput(); err != nil {
		t.Skipf("no docker compose plugin (%v): compose.yaml is checked only by TestCompose\n%s", err, lastLine(out))
	}
	dir := t.TempDir()
	for _, f := range []string{"compose.yaml", "leashd.env.example"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o600))
	}
	require.NoError(t, os.Rename(filepath.Join(dir, "leashd.env.example"), filepath.Join(dir, "leashd.env")))
	cmd := exec.Command(docker, "compose", "-f", filepath.Join(dir, "compose.yaml"), "config", "--quiet")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// TestREADMENamesRealVariables: every LEASHD_ variable the walkthroughs in
// deploy/README.md tell a newcomer to set is one leashd reads.
func TestREADMENamesRealVariables(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	known := knownVars(t)
	notConfig := map[string]bool{"LEASHD_TARGET": true, "LEASHD_NAME": true} // compose's build target; the format's placeholder
	for _, name := range regexp.MustCompile(`LEASHD_[A-Z][A-Z_]*[A-Z]`).FindAllString(string(b), -1) {
		if !notConfig[name] && !strings.HasPrefix(name, "LEASHD_TEST_") {
			assert.Contains(t, known, name, "deploy/README.md names %s, which leashd does not read", name)
		}
	}
}
