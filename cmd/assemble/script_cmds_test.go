package main

import "github.com/rogpeppe/go-internal/testscript"

// scriptCmds are test-only commands available inside testscript scripts.
// Each is small and documented where it is defined (script_*_test.go).
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"addentry":   addEntry,
		"touchall":   touchAll,
		"mkcloud":    mkcloud,
		"tamper":     tamper,
		"envfile":    envfile,
		"islink":     isLink,
		"samemode":   sameMode,
		"gpghome":    gpgHome,
		"gpgpreset":  gpgPreset,
		"fpr":        fprCmd,
		"readme":     readmeRecipes,
		"filedigest": fileDigest,
		"ghactions":  ghActions,
		"registry":   registryCmd,
		"serve":      serveCmd,
	}
}
