import Foundation
import Testing
@testable import StoragePolicy
@testable import StoragePolicyReports

@Suite("launchd property lists") struct LaunchdPlistTests {
    private func parse(_ plist: LaunchdPlist) throws -> [String: Any] {
        let text = try plist.render()
        let object = try PropertyListSerialization.propertyList(from: Data(text.utf8), options: [], format: nil)
        return try #require(object as? [String: Any])
    }

    @Test("an agent with the label, the apply command, the interval and background priority")
    func interval() throws {
        let job = try SchedulingFixture.job(.every(.days(1)), scope: .user)
        let dict = try parse(LaunchdPlist(job))
        #expect(dict["Label"] as? String == "policyctl.app-sandbox")
        #expect(dict["ProgramArguments"] as? [String] == job.arguments)
        #expect(dict["StartInterval"] as? Int == 86400)
        #expect(dict["StartCalendarInterval"] == nil)
        #expect(dict["ProcessType"] as? String == "Background")
        #expect(dict["LowPriorityIO"] as? Bool == true)
        #expect(dict["LowPriorityBackgroundIO"] as? Bool == true)
        #expect(dict["Nice"] as? Int == 19)
        #expect(dict["StandardOutPath"] as? String == "/Users/ana/Library/Logs/policyctl-app-sandbox.log")
        #expect(dict["StandardErrorPath"] as? String == "/Users/ana/Library/Logs/policyctl-app-sandbox.log")
        #expect(LaunchdPlist(job).fileName == "policyctl.app-sandbox.plist")
        #expect(LaunchdPlist(job).loadCommand(installedAt: "/Users/ana/Library/LaunchAgents/policyctl.app-sandbox.plist")
                == "launchctl bootstrap gui/$(id -u) /Users/ana/Library/LaunchAgents/policyctl.app-sandbox.plist")
    }

    @Test("a daemon logs under /Library/Logs")
    func daemon() throws {
        let dict = try parse(LaunchdPlist(try SchedulingFixture.job(.every(.hours(6)))))
        #expect(dict["StandardOutPath"] as? String == "/Library/Logs/policyctl-app-sandbox.log")
    }

    @Test("calendars become StartCalendarInterval dictionaries (Sunday is 0)", arguments: [
        ("daily", [["Hour": 0, "Minute": 0]]),
        ("hourly", [["Minute": 0]]),
        ("Mon..Fri 02:30", (1...5).map { ["Weekday": $0, "Hour": 2, "Minute": 30] }),
        ("Sat,Sun 09:00", [["Weekday": 0, "Hour": 9, "Minute": 0], ["Weekday": 6, "Hour": 9, "Minute": 0]]),
        ("quarterly", [1, 4, 7, 10].map { ["Month": $0, "Day": 1, "Hour": 0, "Minute": 0] }),
        ("*:0/30", [["Minute": 0], ["Minute": 30]]),
    ])
    func calendars(spec: String, expected: [[String: Int]]) throws {
        let dict = try parse(LaunchdPlist(try SchedulingFixture.job(SchedulingFixture.on(spec))))
        let value = dict["StartCalendarInterval"]
        let intervals = (value as? [[String: Int]]) ?? (value as? [String: Int]).map { [$0] }
        #expect(intervals.map(Set.init) == Set(expected))
        #expect(dict["StartInterval"] == nil)
    }

    @Test("what launchd cannot say is refused", arguments: [
        ("*:*:30", "launchd cannot run at seconds other than :00 ('*:*:30'); use minutes and coarser fields, e.g. 'Mon..Fri 02:30', '*-*-01 04:00', '*:0/15', 'daily'"),
        ("2030-01-01", "launchd cannot restrict the year ('2030-01-01'); use minutes and coarser fields, e.g. 'Mon..Fri 02:30', '*-*-01 04:00', '*:0/15', 'daily'"),
        ("Mon *-*-01", "launchd cannot require both a weekday and a day of the month ('Mon *-*-01'): it runs when either matches; use minutes and coarser fields, e.g. 'Mon..Fri 02:30', '*-*-01 04:00', '*:0/15', 'daily'"),
    ])
    func refusals(spec: String, message: String) throws {
        let plist = LaunchdPlist(try SchedulingFixture.job(SchedulingFixture.on(spec)))
        #expect(throws: ScheduleError(message)) { try plist.render() }
    }

    @Test("markup in paths is escaped and reads back exactly")
    func escaping() throws {
        let job = try SchedulingFixture.job(.every(.days(1)), root: "/Volumes/A&B <data> \"x\"")
        #expect(try LaunchdPlist(job).render().contains("<string>/Volumes/A&amp;B &lt;data&gt; \"x\"</string>"))
        #expect(try parse(LaunchdPlist(job))["ProgramArguments"] as? [String] == job.arguments)
    }
}
