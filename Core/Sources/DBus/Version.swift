import CDBus
public func dbusVersion() -> String { var a: Int32 = 0, b: Int32 = 0, c: Int32 = 0; dbus_get_version(&a, &b, &c); return "\(a).\(b).\(c)" }
