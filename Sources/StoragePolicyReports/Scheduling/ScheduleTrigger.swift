// When a scheduled apply runs: every DURATION (counted from the last run) or on a calendar specification.
// Parsing refuses what no scheduler should run (`0s`, `banana`) and says which forms are accepted.

@_spi(Layers) import StoragePolicyModel

package enum ScheduleTrigger: Sendable, Hashable, CustomStringConvertible {
    case every(PolicyDuration)
    case calendar(CalendarSpec)

    /// The shortest interval accepted: a run more often than this is a busy loop, not maintenance
    /// (and cron cannot go below a minute anyway).
    package static let minimumInterval = PolicyDuration.minutes(1)

    /// Parses `--every`: a policy duration of at least a minute.
    package init(every text: String) throws(ScheduleError) {
        guard let duration = PolicyDuration(parsing: text) else {
            throw ScheduleError("invalid interval '\(text)' for --every: expected \(PolicyDuration.acceptedForms)")
        }
        guard duration >= ScheduleTrigger.minimumInterval else {
            throw ScheduleError("interval '\(text)' for --every is too short: it must be at least \(ScheduleTrigger.minimumInterval) (e.g. 15m, 1h, 1d)")
        }
        self = .every(duration)
    }

    /// Parses `--on`: a calendar specification in the forms `CalendarSpec` accepts.
    package init(calendar text: String) throws(ScheduleError) {
        self = .calendar(try CalendarSpec(parsing: text))
    }

    /// The shortest time between two runs.
    package var shortestGap: PolicyDuration {
        switch self {
        case .every(let d): d
        case .calendar(let c): c.shortestGap
        }
    }

    /// The longest time between two runs: what the effective maximum age adds to a rule's age.
    package var longestGap: PolicyDuration {
        switch self {
        case .every(let d): d
        case .calendar(let c): c.longestGap
        }
    }

    /// A tenth of the shortest gap, at most an hour: enough to spread many hosts' runs apart, never so much
    /// that two runs merge.
    package var randomizedDelay: PolicyDuration {
        PolicyDuration(seconds: max(1, min(shortestGap.seconds / 10, 3600)))
    }

    /// How much later than planned systemd may start a run to batch wake-ups: a minute, less for short gaps.
    package var accuracy: PolicyDuration {
        PolicyDuration(seconds: max(1, min(shortestGap.seconds / 10, 60)))
    }

    /// `every 1d` or `on Mon..Fri 02:30`.
    package var description: String {
        switch self {
        case .every(let d): "every \(d)"
        case .calendar(let c): "on \(c.text)"
        }
    }
}
