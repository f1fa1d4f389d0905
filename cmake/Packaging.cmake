# The Debian package: `cmake --build build --target package` (or `cd build && cpack -G DEB`) writes
# build/fulfillsync_<version>_amd64.deb from the install() rules, with CMAKE_INSTALL_PREFIX /usr.
# tests/package/check_deb.sh checks what it contains.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fulfillsync)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "fulfillsync")
set(CPACK_PACKAGE_CONTACT "fulfillsync maintainers <fulfillsync@localhost>")
# Installed with prefix /usr whatever the build tree's CMAKE_INSTALL_PREFIX, and through DESTDIR so
# that the absolute destination /etc/fulfillsync lands in the package too.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_SET_DESTDIR ON)
# Binaries without debug information; the build tree keeps the unstripped ones.
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "merchant database to fulfillment provider synchronisation daemon")

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_NAME fulfillsync)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The extended description (CPack puts the summary above it and indents it for the control file). It
# names the build type the package was made from: the package is built from whatever tree it is
# packaged in, and the project's own is RelWithDebInfo, Release's code (README, "The Debian package").
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "fulfillsyncd connects a merchant's SQL database to an order-fulfillment provider's HTTPS JSON API:
it pushes orders, cancels and returns exactly once and pulls shipments, tracking, statuses and
inventory levels back, keeping its own SQLite checkpoint store and exporting Prometheus metrics.
fulfillsync-sandbox emulates the provider's API locally for tests and trials.

The package creates the fulfillsync system user and /var/lib/fulfillsync and installs the
fulfillsyncd.service and fulfillsyncd@.service units, but enables and starts neither: write
/etc/fulfillsync/fulfillsync.yaml (from fulfillsync.example.yaml) and the API token first, then
run systemctl enable --now fulfillsyncd. Prometheus alert rules and a Grafana dashboard are in
/usr/share/fulfillsync/monitoring.

Built with CMake's ${CMAKE_BUILD_TYPE} configuration, then stripped. The project packages
RelWithDebInfo: the code of the Release configuration its whole test suite and CI run
against (-O3, the invariants kept), with debug information.")

# Dependencies from the shared libraries the binaries link, as Debian declares them.
find_program(FULFILLSYNC_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(FULFILLSYNC_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  # What dpkg-shlibdeps finds on Debian 12 (SQLiteCpp is linked statically).
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6, libstdc++6, libgcc-s1, libssl3, libsqlite3-0, libsimdjson14, libyaml-cpp0.7, libfmt9, libspdlog1.10-fmt9, libprometheus-cpp-core1.0, zlib1g, libcrypt1, libpq5")
endif()
# merchant.timezone other than UTC reads the zone from /usr/share/zoneinfo.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "tzdata")
# postinst runs systemd-sysusers and systemd-tmpfiles, and daemon-reload; it starts nothing.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/deb/conffiles
    ${PROJECT_SOURCE_DIR}/packaging/deb/postinst
    ${PROJECT_SOURCE_DIR}/packaging/deb/prerm
    ${PROJECT_SOURCE_DIR}/packaging/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
