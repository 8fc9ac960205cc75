// Standard error for the example's messages; standard output stays for what it did.
// Writes only to file descriptor 2.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum FileHandleOutput {
    /// Writes `text` and a newline to standard error.
    static func error(_ text: String) {
        let line = Array((text + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
