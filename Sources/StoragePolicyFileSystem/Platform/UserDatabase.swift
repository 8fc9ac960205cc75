// Names in the user and group databases to ids, for rules' `owner:` and `group:` filters. The reentrant calls
// (getpwnam_r, getgrnam_r): a policy is decoded on whichever thread loads it, and the plain getpwnam shares one
// static buffer per process. Asked once per name, when the policy is decoded; the walk compares ids only.
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

package enum UserDatabase {
    /// What the database says of a name.
    package enum Answer: Equatable, Sendable {
        case id(UInt32)
        /// No such user or group.
        case unknown
        /// The database could not be read (errno text): not the same as "no such name".
        case failed(String)
    }

    /// The uid of user `name` (getpwnam_r).
    package static func userID(named name: String) -> Answer {
        lookUp { buffer, size in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>? = nil
            let rc = getpwnam_r(name, &entry, buffer, size, &result)
            return (rc, result == nil ? nil : entry.pw_uid)
        }
    }

    /// The gid of group `name` (getgrnam_r).
    package static func groupID(named name: String) -> Answer {
        lookUp { buffer, size in
            var entry = group()
            var result: UnsafeMutablePointer<group>? = nil
            let rc = getgrnam_r(name, &entry, buffer, size, &result)
            return (rc, result == nil ? nil : entry.gr_gid)
        }
    }

    /// Runs `call` with a buffer that grows on ERANGE (a group with many members needs more than the usual
    /// sysconf hint), up to 1 MiB.
    private static func lookUp(_ call: (UnsafeMutablePointer<CChar>, Int) -> (Int32, UInt32?)) -> Answer {
        var size = 4096
        while true {
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            let (rc, id) = call(buffer, size)
            if rc == 0 { return id.map(Answer.id) ?? .unknown }
            // glibc answers ENOENT, ESRCH, EBADF or EPERM for "no such name" in some configurations.
            if rc == ENOENT || rc == ESRCH || rc == EBADF || rc == EPERM { return .unknown }
            if rc == ERANGE && size < 1 << 20 { size *= 4; continue }
            return .failed(String(cString: strerror(rc)))
        }
    }
}
