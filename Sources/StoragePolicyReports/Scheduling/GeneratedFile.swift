// One file a scheduler reads (a unit, a plist, a crontab fragment): its file name and contents.
// Only text: writing it into a directory is the caller's job.

package struct GeneratedFile: Sendable, Hashable {
    /// The file name, without a directory: `policyctl-app-sandbox.timer`.
    package var name: String
    package var contents: String

    package init(name: String, contents: String) { self.name = name; self.contents = contents }
}
