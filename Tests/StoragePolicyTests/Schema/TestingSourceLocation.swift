// Makes `SourceLocation` in this test module mean Swift Testing's, as the YAML tests expect, now that
// StoragePolicy also exports a `SourceLocation`. Never used for policy locations; delete it once the library's type is renamed.
import Testing

typealias SourceLocation = Testing.SourceLocation
