// `policyctl status`'s "next timer run": the systemd timer `policyctl schedule --install` writes for this policy
// (`policyctl-NAME.timer`, NAME the policy's name as schedule defaults it), and when it is there, the next elapse
// systemd has for it. The unit file is only looked at (lstat), never read; systemctl is run by absolute path
// (never found through PATH, which root must not take from the caller's environment), with a clean environment.
import Foundation
import StoragePolicy

enum StatusTimer {
    /// What status prints: `none installed`, the next elapse as systemd gives it, or why it is not known.
    static func nextRun(policyName: String, user: Bool, home: String?) -> String {
        let unit = "policyctl-\(policyName).timer"
        let folder = user ? home.map { "\($0)/.config/systemd/user" } : "/etc/systemd/system"
        guard let folder else { return "unknown (no home folder for the user's units)" }
        guard system_lstat("\(folder)/\(unit)") != nil else { return "none installed (\(folder)/\(unit) is absent)" }
        guard let systemctl = ["/usr/bin/systemctl", "/bin/systemctl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return "installed; next run unknown (no systemctl)"
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: systemctl)
        process.arguments = (user ? ["--user"] : []) + ["show", "--property=NextElapseUSecRealtime", "--value", unit]
        process.environment = ["LC_ALL": "C"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return "installed; next run unknown (systemctl did not start)" }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        process.waitUntilExit()
        guard process.terminationStatus == 0, !text.isEmpty, text != "n/a" else {
            return "installed; next run unknown (the timer is not active: systemctl enable --now \(unit))"
        }
        return text
    }
}
