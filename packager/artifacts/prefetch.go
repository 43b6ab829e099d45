package artifacts

import (
	"crypto/sha256"
	"fmt"
	"path"
	"runtime"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// A prefetcher makes the zips of a template's artifacts ahead of Export's
// walk, so that one artifact's serial steps (listing its folder, writing
// the zip, hashing it, the walk itself) overlap the compression of the
// next ones. A first pass over the template lists the local paths the
// walk will add, in the walk's order; a dispatcher lists each folder and
// hands its files to a pool of runtime.GOMAXPROCS(0) workers shared by
// all artifacts; the walk then takes each finished zip when it adds the
// artifact.
//
// The result of a prefetch is only an optimisation: the walk still
// resolves and checks every path itself, and redoes synchronously (with
// the same code, so the same error) any artifact the prefetch did not
// make or failed on. The bytes are those makeZip writes. At most window
// artifacts are made and not yet taken at a time, which bounds the memory
// beyond what the Set keeps anyway.
type prefetcher struct {
	s      *Set
	quit   chan struct{}
	sem    chan struct{} // one token per artifact being made or made and not taken
	tasks  chan task
	wg     sync.WaitGroup // dispatcher, workers, assemblers
	mu     sync.Mutex
	byKey  map[string]*entry
	list   []*entry
	cursor int // entries before it have been taken or passed over
}

type task struct {
	f   zipFile
	out *compressed
	wg  *sync.WaitGroup
}

// An entry is one artifact the first pass found.
type entry struct {
	key string
	dir string // what Add is called with
	zip bool
	idx int

	state    int // pending, started, taken, dropped
	finished bool
	done     chan struct{}
	data     []byte
	sum      [32]byte
	ok       bool
}

const (
	pending = iota
	started
	taken
	dropped
)

// prefetchKey names what a prefetched zip was made from: a folder, or
// one file zipped (a path under the root).
func prefetchKey(rel string, folder bool) string {
	if folder {
		return "d:" + rel
	}
	return "f:" + rel
}

// startPrefetch starts making the zips of the artifacts the walk of ex's
// template will add. stop must be called after the walk.
func (ex *exporter) startPrefetch() *prefetcher {
	workers := runtime.GOMAXPROCS(0)
	p := &prefetcher{
		s:     ex.s,
		quit:  make(chan struct{}),
		sem:   make(chan struct{}, min(workers, 16)+1),
		tasks: make(chan task),
		byKey: map[string]*entry{},
	}
	ex.plan(p)
	if len(p.list) == 0 {
		return p
	}
	for w := 0; w < workers; w++ {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			fw := newFlaters()
			for t := range p.tasks {
				select {
				case <-p.quit:
					t.out.err = errStopped
				default:
					*t.out = compressOne(p.s.root, t.f, fw)
				}
				t.wg.Done()
			}
		}()
	}
	p.wg.Add(1)
	go p.dispatch()
	return p
}

// errStopped marks the entries not compressed after stop.
var errStopped = fmt.Errorf("%w: the build stopped before it was zipped", ErrArtifact)

// plan lists the artifacts the walk adds from Metadata and Resources that
// a zip is made of, in the walk's order (see exporter.metadata and
// exporter.resources). Nested templates are not looked into.
func (ex *exporter) plan(p *prefetcher) {
	if !ex.s.HasBucket() {
		return
	}
	md := get(ex.t.Root, "Metadata")
	for _, pr := range Properties() {
		if pr.Metadata {
			if v := getPath(get(md, pr.Type), pr.Path); isLocal(v) {
				p.candidate(ex.dir, v.Value, false)
			}
		}
	}
	res := get(ex.t.Root, "Resources")
	if res == nil {
		return
	}
	var walk func(res *yaml.Node)
	walk = func(res *yaml.Node) {
		if res.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(res.Content); i += 2 {
			k, r := res.Content[i], res.Content[i+1]
			if strings.HasPrefix(k.Value, "Fn::ForEach::") {
				if r.Kind == yaml.SequenceNode && len(r.Content) == 3 {
					walk(r.Content[2])
				}
				continue
			}
			typ, props := get(r, "Type"), get(r, "Properties")
			if typ == nil || props == nil {
				continue
			}
			for _, pr := range Properties() {
				if pr.Metadata || pr.Template || pr.Type != typ.Value {
					continue
				}
				if v := getPath(props, pr.Path); isLocal(v) {
					p.candidate(ex.dir, v.Value, pr.ForceZip)
				}
			}
		}
	}
	walk(res)
}

// candidate adds the artifact at local when it resolves to a folder, or
// to a file to be zipped; what does not resolve is left to the walk.
func (p *prefetcher) candidate(dir, local string, zip bool) {
	rel, st, err := p.s.resolve(dir, local, Pos{})
	if err != nil {
		return
	}
	folder := st.IsDir()
	if !folder && !(zip && st.Mode().IsRegular() && st.Size() <= artifactLimit) {
		return
	}
	key := prefetchKey(rel, folder)
	if p.byKey[key] != nil {
		return
	}
	e := &entry{key: key, dir: rel, zip: !folder, idx: len(p.list), done: make(chan struct{})}
	p.byKey[key] = e
	p.list = append(p.list, e)
}

// dispatch makes the entries in order, window at a time.
func (p *prefetcher) dispatch() {
	defer p.wg.Done()
	defer close(p.tasks)
	for _, e := range p.list {
		select {
		case p.sem <- struct{}{}:
		case <-p.quit:
			return
		}
		p.mu.Lock()
		if e.state != pending {
			p.mu.Unlock()
			<-p.sem
			continue
		}
		e.state = started
		p.mu.Unlock()
		files := p.files(e)
		if files == nil {
			p.finish(e, nil)
			continue
		}
		out := make([]compressed, len(files))
		var wg sync.WaitGroup
		wg.Add(len(files))
		for i, f := range files {
			select {
			case p.tasks <- task{f: f, out: &out[i], wg: &wg}:
			case <-p.quit:
				wg.Add(i - len(files)) // the tasks never sent
				wg.Wait()
				p.finish(e, nil)
				return
			}
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			wg.Wait()
			for _, c := range out {
				if c.err != nil {
					p.finish(e, nil)
					return
				}
			}
			data, err := writeZip(files, out)
			if err != nil {
				data = nil
			}
			p.finish(e, data)
		}()
	}
}

// files lists what goes into e's zip, or nil when the walk is to find out
// why there is nothing (an error, an empty folder, a file that is a zip).
func (p *prefetcher) files(e *entry) []zipFile {
	root := p.s.root
	if !e.zip {
		files, err := collect(root, e.dir, e.dir, p.s.skip...)
		if err != nil || len(files) == 0 {
			return nil
		}
		return files
	}
	f, err := root.Open(e.dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > artifactLimit {
		return nil
	}
	if isZipFile(f, st.Size()) {
		return nil
	}
	return []zipFile{{name: path.Base(e.dir), rel: e.dir, exec: st.Mode()&0o111 != 0, size: st.Size()}}
}

// finish records e's zip (nil when it was not made) and frees its token
// when the walk passed it over meanwhile.
func (p *prefetcher) finish(e *entry, data []byte) {
	var sum [32]byte
	if data != nil {
		sum = sha256.Sum256(data)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e.finished = true
	if e.state == dropped {
		<-p.sem
	} else {
		e.data, e.sum, e.ok = data, sum, data != nil
	}
	close(e.done)
}

// take returns the zip made of rel (a folder, or a file zipped) and its
// digest, when the prefetch made it; the walk makes it itself otherwise.
// Entries listed before it and not taken are passed over: the walk has
// gone past them.
func (p *prefetcher) take(rel string, folder bool) ([]byte, [32]byte, bool) {
	if p == nil {
		return nil, [32]byte{}, false
	}
	p.mu.Lock()
	e := p.byKey[prefetchKey(rel, folder)]
	if e == nil || e.state == taken || e.state == dropped {
		p.mu.Unlock()
		return nil, [32]byte{}, false
	}
	for ; p.cursor < e.idx; p.cursor++ {
		p.drop(p.list[p.cursor])
	}
	if p.cursor == e.idx {
		p.cursor++
	}
	was := e.state
	e.state = taken
	delete(p.byKey, e.key)
	p.mu.Unlock()
	if was == pending {
		return nil, [32]byte{}, false
	}
	<-e.done
	data, sum, ok := e.data, e.sum, e.ok
	e.data = nil
	<-p.sem
	return data, sum, ok
}

// drop passes e over; p.mu is held.
func (p *prefetcher) drop(e *entry) {
	switch e.state {
	case pending:
		e.state = dropped
	case started:
		e.state = dropped
		if e.finished {
			e.data = nil
			<-p.sem
		}
	}
}

// stop ends the prefetch and waits for its goroutines: the walk is over.
func (p *prefetcher) stop() {
	if p == nil {
		return
	}
	close(p.quit)
	p.wg.Wait()
	p.mu.Lock()
	for _, e := range p.list {
		e.data = nil
	}
	p.mu.Unlock()
}
