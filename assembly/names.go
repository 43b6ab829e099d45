package assembly

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// MaxSegmentLength is the longest path segment (file or folder name), in
// bytes: file systems commonly hold at most 255.
const MaxSegmentLength = 255

// Name rules. Each refusal names its rule; the strings are stable.
const (
	RuleEmpty            = "empty-name"
	RuleNotUTF8          = "not-utf8"
	RuleTooLong          = "name-too-long"
	RuleAbsolute         = "absolute-path"
	RuleBackslash        = "backslash"
	RuleDriveLetter      = "drive-letter"
	RuleControl          = "control-character"
	RuleBidi             = "bidi-control"
	RuleEmptySegment     = "empty-segment"
	RuleDotSegment       = "dot-segment"
	RuleSegmentTooLong   = "segment-too-long"
	RuleTrailing         = "trailing-space-or-dot"
	RuleWindowsDevice    = "windows-device-name"
	RuleWindowsCharacter = "windows-reserved-character"
	RuleFileAndFolder    = "file-and-folder"
	RuleReserved         = "reserved-name"
)

// CheckName reports whether name is an entry name that extracts to the same
// file on Linux, macOS and Windows: non-empty valid UTF-8, relative,
// slash-separated, without "." or ".." or empty segments, backslashes, drive
// letters, C0 or C1 control characters, bidirectional controls (U+202A to
// U+202E, U+2066 to U+2069), the characters Windows reserves (< > : " | ? *),
// segments over MaxSegmentLength bytes or ending in a space or a dot (which
// Windows drops), and Windows device names (CON, PRN, AUX, NUL, COM0-9,
// LPT0-9, CONIN$, CONOUT$, also with an extension: CON.txt). The error
// wraps ErrInsecurePath (ErrTooLarge for an over-long name) and names the
// rule. It is the one name check of the reader and the writer.
func CheckName(name string) error {
	bad := func(rule, why string) error {
		return fmt.Errorf("%w: %q: %s (rule %s)", ErrInsecurePath, name, why, rule)
	}
	switch {
	case name == "":
		return bad(RuleEmpty, "empty name")
	case !utf8.ValidString(name):
		return bad(RuleNotUTF8, "name is not valid UTF-8")
	case len(name) > MaxNameLength:
		return fmt.Errorf("%w: %q... is %d bytes long, at most %d allowed: shorten the path (rule %s)", ErrTooLarge, name[:64], len(name), MaxNameLength, RuleTooLong)
	case strings.HasPrefix(name, "/"):
		return bad(RuleAbsolute, "absolute path")
	case strings.Contains(name, `\`):
		return bad(RuleBackslash, "backslash")
	case len(name) >= 2 && name[1] == ':' && ('a' <= name[0]|0x20 && name[0]|0x20 <= 'z'):
		return bad(RuleDriveLetter, "drive letter")
	}
	for _, c := range name {
		switch {
		case c < 0x20 || c == 0x7f || 0x80 <= c && c <= 0x9f:
			return bad(RuleControl, fmt.Sprintf("control character %U", c))
		case 0x202a <= c && c <= 0x202e || 0x2066 <= c && c <= 0x2069:
			return bad(RuleBidi, fmt.Sprintf("bidirectional control %U (it can make a name display as another)", c))
		case strings.ContainsRune(`<>:"|?*`, c):
			return bad(RuleWindowsCharacter, fmt.Sprintf("%q, which Windows does not allow in file names", c))
		}
	}
	for rest := name; ; {
		seg, more, found := strings.Cut(rest, "/")
		switch {
		case seg == "":
			return bad(RuleEmptySegment, "empty path segment")
		case seg == "." || seg == "..":
			return bad(RuleDotSegment, "relative path segment")
		case len(seg) > MaxSegmentLength:
			return bad(RuleSegmentTooLong, fmt.Sprintf("path segment of %d bytes, at most %d allowed", len(seg), MaxSegmentLength))
		case seg[len(seg)-1] == ' ' || seg[len(seg)-1] == '.':
			return bad(RuleTrailing, fmt.Sprintf("segment %q ends in a space or a dot, which Windows drops", seg))
		case windowsDevice(seg):
			return bad(RuleWindowsDevice, fmt.Sprintf("%q is a Windows device name", seg))
		}
		if !found {
			return nil
		}
		rest = more
	}
}

// windowsDevice reports whether a path segment names a Windows device: the
// part before the first dot, case-insensitively, is CON, PRN, AUX, NUL,
// COM0-COM9, LPT0-LPT9 (also with a superscript 1, 2 or 3), CONIN$ or CONOUT$.
func windowsDevice(seg string) bool {
	base, _, _ := strings.Cut(seg, ".")
	base = strings.TrimRight(base, " ")
	switch len(base) {
	case 3:
		return strings.EqualFold(base, "CON") || strings.EqualFold(base, "PRN") || strings.EqualFold(base, "AUX") || strings.EqualFold(base, "NUL")
	case 4, 5: // COM1, LPT9, and COM¹ (a two-byte superscript)
		if !strings.EqualFold(base[:3], "COM") && !strings.EqualFold(base[:3], "LPT") {
			return false
		}
		switch base[3:] {
		case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "\u00b9", "\u00b2", "\u00b3":
			return true
		}
	case 6, 7:
		return strings.EqualFold(base, "CONIN$") || strings.EqualFold(base, "CONOUT$")
	}
	return false
}

// foldName is the key under which two names count as the same on a
// case-insensitive file system: Unicode NFC, then each letter's simple
// upper case (what NTFS compares: the dotless ı is I there), then full case
// folding (what APFS compares), then NFC again (folding can denormalize).
// Upper-casing first also makes the key the same for both cases of letters
// that golang.org/x/text folds inconsistently (Cherokee).
func foldName(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return norm.NFC.String(cases.Fold().String(strings.ToUpper(norm.NFC.String(name))))
		}
	}
	// ASCII is in NFC, and folds to lower case.
	return strings.ToLower(name)
}

// A nameSet collects the names of one archive and refuses, as each is
// added, what the tree on disk could not hold: a name CheckName refuses,
// two names equal after folding (foldName), and a name that is both a file
// and a folder ("a" beside "a/b", also after folding). Reader and Writer
// both use it, so a build never writes what verify refuses.
type nameSet struct {
	files   map[string]string // folded name -> name, for files
	folders map[string]string // folded folder path -> a name that holds it
}

func newNameSet(n int) *nameSet {
	return &nameSet{files: make(map[string]string, n), folders: make(map[string]string)}
}

// reserved maps the folded forms of the root names the spec reserves to
// their spelling: at the root, a name that folds to one of them must be
// that file, spelled exactly so, never a folder.
var reserved = map[string]string{foldName(ManifestName): ManifestName, foldName(SignatureName): SignatureName}

// reservedName refuses a root name (key is its folded form, a root folder
// when folder is set) that a case-insensitive file system, or sign, would
// take for manifest.json or signature.asc, unless it is that very file.
func reservedName(name, key string, folder bool) error {
	want, ok := reserved[key]
	if !ok || !folder && name == want {
		return nil
	}
	what := fmt.Sprintf("a file %q", name)
	if folder {
		what = fmt.Sprintf("a folder %q", name)
	}
	return fmt.Errorf("%w: %s at the root: the spec reserves %s for the assembly's own file, which must be spelled exactly so and be a file: rename or move it (rule %s)", ErrInsecurePath, what, want, RuleReserved)
}

// addFile adds a file name.
func (s *nameSet) addFile(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	key := foldName(name)
	if prev, dup := s.files[key]; dup {
		if prev == name {
			return fmt.Errorf("%w: %q appears twice", ErrDuplicate, name)
		}
		if norm.NFC.String(prev) == norm.NFC.String(name) {
			// They print alike: show the code points.
			return fmt.Errorf("%w: %+q and %+q differ only in Unicode normalization (NFC and NFD), and are one file on macOS: rename one of them", ErrDuplicate, prev, name)
		}
		return fmt.Errorf("%w: %q and %q are the same name after Unicode normalization and case folding: rename one of them", ErrDuplicate, prev, name)
	}
	if err := reservedName(name, key, false); err != nil {
		return err
	}
	if holder, clash := s.folders[key]; clash {
		return fileAndFolder(name, holder)
	}
	if err := s.addParents(name, key); err != nil {
		return err
	}
	s.files[key] = name
	return nil
}

// addFolder adds a folder name, without its trailing slash (a directory
// entry of the archive).
func (s *nameSet) addFolder(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	key := foldName(name)
	if prev, clash := s.files[key]; clash {
		return fileAndFolder(prev, name+"/")
	}
	if !strings.Contains(key, "/") {
		if err := reservedName(name, key, true); err != nil {
			return err
		}
	}
	if err := s.addParents(name, key); err != nil {
		return err
	}
	if _, seen := s.folders[key]; !seen {
		s.folders[key] = name + "/"
	}
	return nil
}

// addParents records every folder above name (key is its folded form),
// refusing one that is already a file.
func (s *nameSet) addParents(name, key string) error {
	for i := len(key) - 1; i > 0; i-- {
		if key[i] != '/' {
			continue
		}
		dir := key[:i]
		if prev, clash := s.files[dir]; clash {
			return fileAndFolder(prev, name)
		}
		if _, seen := s.folders[dir]; seen {
			break // and so are the folders above it
		}
		if !strings.Contains(dir, "/") {
			if err := reservedName(name[:strings.IndexByte(name, '/')], dir, true); err != nil {
				return err
			}
		}
		s.folders[dir] = name
	}
	return nil
}

func fileAndFolder(file, inside string) error {
	return fmt.Errorf("%w: %q is a file, and %q needs a folder of that name (rule %s)", ErrDuplicate, file, inside, RuleFileAndFolder)
}
