package codeindex

import (
	"path/filepath"
	"sort"
	"strings"
)

// all returns every symbol, ordered by file and line.
func (ix *Index) all(keep func(Symbol) bool) []Symbol {
	ix.mu.RLock()
	var out []Symbol
	for _, e := range ix.files {
		for _, s := range e.symbols {
			if keep(s) {
				out = append(out, s)
			}
		}
	}
	ix.mu.RUnlock()
	ix.sortSymbols(out)
	return out
}

func (ix *Index) sortSymbols(ss []Symbol) {
	sort.SliceStable(ss, func(i, j int) bool {
		ti, tj := ix.isTest(ss[i].File), ix.isTest(ss[j].File)
		if ti != tj {
			return !ti // non-test files first
		}
		if ss[i].File != ss[j].File {
			return ss[i].File < ss[j].File
		}
		return ss[i].Line < ss[j].Line
	})
}

func isType(s Symbol) bool {
	return s.Kind == KindStruct || s.Kind == KindInterface || s.Kind == KindType
}

func isFunc(s Symbol) bool { return s.Kind == KindFunc || s.Kind == KindMethod }

// from returns the symbols that keep accepts among the files that the map
// m links to any of keys, ordered as all orders them.
func (ix *Index) from(m map[string]map[string]struct{}, keys []string, keep func(Symbol) bool) []Symbol {
	ix.mu.RLock()
	var out []Symbol
	done := map[string]bool{}
	for _, k := range keys {
		for rel := range m[k] {
			if done[rel] {
				continue
			}
			done[rel] = true
			for _, s := range ix.files[rel].symbols {
				if keep(s) {
					out = append(out, s)
				}
			}
		}
	}
	ix.mu.RUnlock()
	ix.sortSymbols(out)
	return out
}

// byName keeps the exact matches of name, or when there are none the
// case-insensitive ones.
func byName(ix *Index, name string, keep func(Symbol) bool) []Symbol {
	folded := ix.from(ix.names, []string{strings.ToLower(name)}, func(s Symbol) bool { return keep(s) && strings.EqualFold(s.Name, name) })
	var exact []Symbol
	for _, s := range folded {
		if s.Name == name {
			exact = append(exact, s)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return folded
}

// FindTypes returns the named types called name (exactly, or ignoring case
// when nothing matches exactly), non-test files first.
func (ix *Index) FindTypes(name string) []Symbol { return byName(ix, name, isType) }

// FindFuncs returns the functions and methods called name (exactly, or
// ignoring case when nothing matches exactly). "Type.Name" finds methods of
// Type.
func (ix *Index) FindFuncs(name string) []Symbol {
	if class, m, ok := strings.Cut(name, "."); ok && class != "" && m != "" {
		return ix.FindMethod(class, m)
	}
	return byName(ix, name, isFunc)
}

// FindMethod returns the methods called name whose receiver type is class
// (a leading '*' is ignored).
func (ix *Index) FindMethod(class, name string) []Symbol {
	class = strings.TrimLeft(strings.TrimSpace(class), "*")
	folded := ix.from(ix.recvs, []string{strings.ToLower(class)}, func(s Symbol) bool {
		return s.Kind == KindMethod && strings.EqualFold(s.Receiver, class) && strings.EqualFold(s.Name, name)
	})
	var exact []Symbol
	for _, s := range folded {
		if s.Receiver == class && s.Name == name {
			exact = append(exact, s)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return folded
}

// MethodsOf returns the methods whose receiver type is class.
func (ix *Index) MethodsOf(class string) []Symbol {
	class = strings.TrimLeft(strings.TrimSpace(class), "*")
	return ix.from(ix.recvs, []string{strings.ToLower(class)}, func(s Symbol) bool { return s.Kind == KindMethod && s.Receiver == class })
}

// InFile returns the symbols of one file (relative path), in line order.
func (ix *Index) InFile(rel string) []Symbol {
	rel = filepath.ToSlash(filepath.Clean(rel))
	ix.mu.RLock()
	e := ix.files[rel]
	var out []Symbol
	if e != nil {
		out = append(out, e.symbols...)
	}
	ix.mu.RUnlock()
	return out
}

// FuncsInFile returns the functions and methods of one file, in line order.
func (ix *Index) FuncsInFile(rel string) []Symbol {
	var out []Symbol
	for _, s := range ix.InFile(rel) {
		if isFunc(s) {
			out = append(out, s)
		}
	}
	return out
}

// Similar returns up to n symbols whose name contains query or is contained
// in it, ignoring case: suggestions for a name that matched nothing. kind
// filters by kind ("" for any; "type" means any type, "func" any function).
func (ix *Index) Similar(query, kind string, n int) []Symbol {
	q := strings.ToLower(query)
	if i := strings.LastIndex(q, "."); i >= 0 {
		q = q[i+1:]
	}
	if q == "" {
		return nil
	}
	keep := func(s Symbol) bool {
		switch kind {
		case KindType:
			if !isType(s) {
				return false
			}
		case KindFunc:
			if !isFunc(s) {
				return false
			}
		case "":
		default:
			if s.Kind != kind {
				return false
			}
		}
		return like(strings.ToLower(s.Name), q)
	}
	out := ix.from(ix.names, ix.likeNames(q), keep)
	sort.SliceStable(out, func(i, j int) bool {
		return abs(len(out[i].Name)-len(query)) < abs(len(out[j].Name)-len(query))
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// likeNames returns the lower-cased names that hold q (lower case), or
// that q holds when they have three characters or more.
func (ix *Index) likeNames(q string) []string {
	if strings.ContainsRune(q, '\n') {
		return nil
	}
	list := ix.nameList()
	seen := map[string]bool{}
	var keys []string
	for off := 0; off < len(list.text); {
		i := strings.Index(list.text[off:], q)
		if i < 0 {
			break
		}
		k := sort.SearchInts(list.starts, off+i+1) - 1
		if key := list.keys[k]; !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
		off = list.starts[k] + len(list.keys[k]) + 1
	}
	ix.mu.RLock()
	for a := 0; a < len(q); a++ {
		for b := a + 3; b <= len(q); b++ {
			if _, ok := ix.names[q[a:b]]; ok && !seen[q[a:b]] {
				seen[q[a:b]] = true
				keys = append(keys, q[a:b])
			}
		}
	}
	ix.mu.RUnlock()
	if len(keys) > maxLike {
		sort.Slice(keys, func(i, j int) bool {
			di, dj := abs(len(keys[i])-len(q)), abs(len(keys[j])-len(q))
			if di != dj {
				return di < dj
			}
			return keys[i] < keys[j]
		})
		keys = keys[:maxLike]
	}
	return keys
}

// nameList returns the names as one text, made again after changes.
func (ix *Index) nameList() *nameList {
	ix.listMu.Lock()
	defer ix.listMu.Unlock()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.list != nil && ix.list.gen == ix.gen {
		return ix.list
	}
	l := &nameList{gen: ix.gen, keys: make([]string, 0, len(ix.names))}
	for k := range ix.names {
		l.keys = append(l.keys, k)
	}
	sort.Strings(l.keys)
	var b strings.Builder
	l.starts = make([]int, len(l.keys))
	for i, k := range l.keys {
		l.starts[i] = b.Len()
		b.WriteString(k)
		b.WriteByte('\n')
	}
	l.text = b.String()
	ix.list = l
	return l
}

// like: a name l (lower case) holds the query q, or is held by it.
func like(l, q string) bool {
	return strings.Contains(l, q) || (len(l) >= 3 && strings.Contains(q, l))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Len is the number of indexed symbols.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := 0
	for _, e := range ix.files {
		n += len(e.symbols)
	}
	return n
}

// All returns every symbol, non-test files first, then by file and line.
func (ix *Index) All() []Symbol { return ix.all(func(Symbol) bool { return true }) }
