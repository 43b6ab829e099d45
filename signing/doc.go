// Package signing attests, clear-signs and verifies Cloud Assemblies.
package signing
