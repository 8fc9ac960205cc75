// A custom rule as a struct: deletes empty regular files once they are older than a limit.
// It only answers; the engine plans, journals and applies the deletes.
import StoragePolicy

/// Zero-byte files untouched for longer than `olderThan` are leftovers of failed writes: delete them.
struct ZeroByteFiles: CustomRule {
    /// Younger empty files may be a write in progress: left alone.
    var olderThan: PolicyDuration

    var summary: String { "Empty files older than \(olderThan) are deleted." }

    func evaluate(_ entry: CustomRuleEntry) -> [CustomRuleVerdict] {
        guard entry.type == .regular, entry.size == 0, entry.isOlder(than: olderThan) else { return [] }
        return [.delete(reason: "zero bytes, mtime older than \(olderThan)")]
    }
}
