package sandbox

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The Go build cache of a confined command is layered: the repository's
// own cache (filled only by its setup, which runs no code of the
// repository's) and the seed are read, never written; what a command
// compiles goes to a scratch directory of its own, removed when it ends.
// A test can therefore not plant an entry that a later build trusts: the
// Go build cache holds compiled packages by the hash of their inputs, and
// takes what it finds there for the compiler's output.
//
// The layers are served to the go command through GOCACHEPROG by redfix's
// helper inside the sandbox (see helper.go), in the go command's own
// on-disk format, so that a layer the go command filled directly (the
// seed, a setup's) is read as it is.

// The environment the helper reads its layers from.
const (
	goCacheReadEnv  = "REDFIX_GOCACHE_READ"
	goCacheWriteEnv = "REDFIX_GOCACHE_WRITE"
)

// goCacheConfig is what the cache program serves: the layers it reads, in
// order, and the one it writes (read first).
type goCacheConfig struct {
	read  []string
	write string
}

func goCacheConfigFromEnv() goCacheConfig {
	var c goCacheConfig
	for _, d := range filepath.SplitList(os.Getenv(goCacheReadEnv)) {
		if d != "" {
			c.read = append(c.read, d)
		}
	}
	c.write = os.Getenv(goCacheWriteEnv)
	return c
}

// goCacheRequest and goCacheResponse are the GOCACHEPROG protocol's
// messages (one JSON object a line; a put's body follows its request as a
// base64 JSON string).
type goCacheRequest struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type goCacheResponse struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// serveGoCache answers the go command's requests on r and w until it
// closes them or asks to close.
func serveGoCache(r io.Reader, w io.Writer, c goCacheConfig) error {
	if c.write == "" {
		return errors.New("no layer to write (" + goCacheWriteEnv + ")")
	}
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	send := func(res goCacheResponse) error {
		if err := enc.Encode(res); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := send(goCacheResponse{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	layers := append([]string{c.write}, c.read...)
	for {
		var req goCacheRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read a request: %w", err)
		}
		var body []byte
		if req.Command == "put" && req.BodySize > 0 {
			if err := dec.Decode(&body); err != nil {
				return fmt.Errorf("read the body of put %d: %w", req.ID, err)
			}
		}
		res := goCacheResponse{ID: req.ID}
		switch req.Command {
		case "get":
			res = getGoCache(layers, req)
		case "put":
			path, err := putGoCache(c.write, req, body)
			if err != nil {
				res.Err = err.Error()
			}
			res.DiskPath = path
		case "close":
			return send(res)
		default:
			res.Err = "unknown command " + strconv.Quote(req.Command)
		}
		if err := send(res); err != nil {
			return err
		}
	}
}

// entrySize is the size of an action entry in the go command's format:
// "v1 <action hex> <output hex> <size, 20 wide> <unix nanoseconds, 20 wide>\n".
const entrySize = 2 + 1 + 64 + 1 + 64 + 1 + 20 + 1 + 20 + 1

// getGoCache looks the action up in each layer in turn.
func getGoCache(layers []string, req goCacheRequest) goCacheResponse {
	for _, dir := range layers {
		if res, ok := lookupGoCache(dir, req.ActionID); ok {
			res.ID = req.ID
			return res
		}
	}
	return goCacheResponse{ID: req.ID, Miss: true}
}

func lookupGoCache(dir string, action []byte) (goCacheResponse, bool) {
	if len(action) != 32 {
		return goCacheResponse{}, false
	}
	f, err := os.Open(cacheFile(dir, action, "a"))
	if err != nil {
		return goCacheResponse{}, false
	}
	defer f.Close()
	buf := make([]byte, entrySize+1)
	n, _ := io.ReadFull(f, buf)
	if n != entrySize {
		return goCacheResponse{}, false
	}
	f1 := strings.Fields(string(buf[:n]))
	if len(f1) != 5 || f1[0] != "v1" || f1[1] != hex.EncodeToString(action) {
		return goCacheResponse{}, false
	}
	out, err := hex.DecodeString(f1[2])
	size, err2 := strconv.ParseInt(f1[3], 10, 64)
	nanos, err3 := strconv.ParseInt(f1[4], 10, 64)
	if err != nil || err2 != nil || err3 != nil || len(out) != 32 || size < 0 {
		return goCacheResponse{}, false
	}
	path := cacheFile(dir, out, "d")
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
		return goCacheResponse{}, false
	}
	t := time.Unix(0, nanos)
	return goCacheResponse{OutputID: out, Size: size, Time: &t, DiskPath: path}, true
}

// putGoCache writes the output and its action entry into dir, in the go
// command's format.
func putGoCache(dir string, req goCacheRequest, body []byte) (string, error) {
	if len(req.ActionID) != 32 || len(req.OutputID) != 32 {
		return "", errors.New("put: action and output IDs are 32 bytes")
	}
	if int64(len(body)) != req.BodySize {
		return "", fmt.Errorf("put: body of %d bytes, announced %d", len(body), req.BodySize)
	}
	out := cacheFile(dir, req.OutputID, "d")
	if err := writeAtomic(out, body); err != nil {
		return "", err
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", req.ActionID, req.OutputID, len(body), time.Now().UnixNano())
	if err := writeAtomic(cacheFile(dir, req.ActionID, "a"), []byte(entry)); err != nil {
		return "", err
	}
	return out, nil
}

// cacheFile is the go command's name for an entry of a cache directory.
func cacheFile(dir string, id []byte, kind string) string {
	return filepath.Join(dir, fmt.Sprintf("%02x", id[0]), fmt.Sprintf("%x-%s", id, kind))
}

// writeAtomic writes data to name through a temporary file renamed over it.
func writeAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), name)
}
