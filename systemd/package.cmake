# The Debian package (CPack): `cpack --config CPackConfig.cmake` in a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr gives jetagent_<version>_<arch>.deb (tools/dev.sh package does both).
# Natively, dpkg-shlibdeps derives Depends from the binary. A cross build cannot run it on the
# target's libraries, so Depends comes from the binary's NEEDED entries through the Debian 12
# table below; JetPack (Ubuntu) packages are best built natively on the board, where shlibdeps
# names Ubuntu's packages.

if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
    set(_deb_arch arm64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    set(_deb_arch amd64)
else()
    set(_deb_arch "")
endif()

set(JETAGENT_PACKAGE_MAINTAINER
    "Seed 214609b3 maintainers <maintainers@users.noreply.a-seed-214609b3.example>"
    CACHE STRING "Maintainer field of the .deb")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME jetagent)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "per-frame latency and energy of vision inference on NVIDIA Jetson")
set(CPACK_PACKAGE_DESCRIPTION
    "jetagent reads frames from cameras and video, runs classification and action recognition \
models on them, and logs per-frame latency and energy. It runs as a systemd service \
(jetagent.service, not enabled on install), as a live camera demo, or as a field power tool.")
set(CPACK_PACKAGE_CONTACT "${JETAGENT_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${JETAGENT_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE "${_deb_arch}")
# Video files are decoded by GStreamer (hal/video_file_source.cpp): the pipeline's own elements
# (decodebin, videoconvert, appsink) are in -base, a Depends below. The containers (AVI, MP4,
# Matroska) and MJPEG are in -good, H.264, H.265 and MPEG-4 decoders in -libav: recommended, not
# required, since -good reaches X11's client libraries and -libav FFmpeg's libavcodec, which the
# core package's Depends must not. The network video outputs (--output rtp://, rtsp://) need RTP
# payloading and UDP (-good) and an H.264 encoder: x264enc (-ugly) or openh264enc (-bad); a Jetson
# has its own (nvv4l2h264enc).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "systemd, gstreamer1.0-plugins-good, gstreamer1.0-libav, gstreamer1.0-plugins-ugly | gstreamer1.0-plugins-bad")
# What the binary needs beside its shared libraries: the HTML reports inline Debian's Chart.js
# (src/app/html_report.h), and GStreamer's base plugins build every pipeline it runs (video files,
# rtsp://, csi://). dpkg-shlibdeps' Depends is added to these (and the cross build's, in
# package_config.cmake).
set(JETAGENT_DEB_EXTRA_DEPENDS libjs-chart.js gstreamer1.0-plugins-base)
string(REPLACE ";" ", " CPACK_DEBIAN_PACKAGE_DEPENDS "${JETAGENT_DEB_EXTRA_DEPENDS}")

# The shared libraries the binary may link, by soname, and their Debian 12 packages: the
# cross build's Depends. A NEEDED entry missing here stops cpack (package_config.cmake).
set(JETAGENT_DEB_SONAME_PACKAGES
    "libopencv_core.so.406=libopencv-core406"
    "libopencv_dnn.so.406=libopencv-dnn406"
    "libopencv_highgui.so.406=libopencv-highgui406"
    "libopencv_imgcodecs.so.406=libopencv-imgcodecs406"
    "libopencv_imgproc.so.406=libopencv-imgproc406"
    "libopencv_videoio.so.406=libopencv-videoio406"
    "libonnx.so.1=libonnx1"
    "libonnx_proto.so.1=libonnx1"
    "libprotobuf.so.32=libprotobuf32"
    "libspdlog.so.1.10=libspdlog1.10-fmt9" # as its shlibs file names it: built against fmt 9
    "libfmt.so.9=libfmt9"
    "libyaml-cpp.so.0.7=libyaml-cpp0.7"
    "libgpiod.so.2=libgpiod2"
    "libcpp-httplib.so.0.11=libcpp-httplib0.11" # the live view (run --serve)
    "libturbojpeg.so.0=libturbojpeg0" # ... its video, and JPEG image files (hal/image_codec.h)
    "libpng16.so.16=libpng16-16" # PNG image files
    "libXNNPACK.so.0=libxnnpack0"
    "libpthreadpool.so.0=libpthreadpool0"
    "libgstapp-1.0.so.0=libgstreamer-plugins-base1.0-0"
    "libgstvideo-1.0.so.0=libgstreamer-plugins-base1.0-0"
    "libgstreamer-1.0.so.0=libgstreamer1.0-0"
    "libgstrtspserver-1.0.so.0=libgstrtspserver-1.0-0"
    "libgobject-2.0.so.0=libglib2.0-0"
    "libglib-2.0.so.0=libglib2.0-0"
    "libstdc++.so.6=libstdc++6"
    "libgcc_s.so.1=libgcc-s1"
    "libm.so.6=libc6"
    "libc.so.6=libc6")
# readelf is used by cross builds only (package_config.cmake), but looked up for every build so
# that the template's @JETAGENT_READELF@ is always set.
find_program(JETAGENT_READELF NAMES ${JETAGENT_CROSS_PREFIX}readelf readelf)
if(CMAKE_CROSSCOMPILING)
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
else()
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()

# Maintainer scripts, and the config as a conffile: dpkg never overwrites an edited one.
foreach(script postinst prerm postrm)
    jetagent_configure_file(debian/${script}.in debian/${script})
endforeach()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles "${JETAGENT_SERVICE_CONFIG}\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles
    ${CMAKE_CURRENT_BINARY_DIR}/debian/postinst
    ${CMAKE_CURRENT_BINARY_DIR}/debian/prerm
    ${CMAKE_CURRENT_BINARY_DIR}/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Debug information stays in the build tree: the package ships the stripped binary.
set(CPACK_STRIP_FILES ON)

# Checks and settings that need cpack's own run (read there, not at configure time).
set(JETAGENT_PACKAGE_CROSS "${CMAKE_CROSSCOMPILING}")
jetagent_configure_file(package_config.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/package_config.cmake.in)
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/package_config.cmake
    INPUT ${CMAKE_CURRENT_BINARY_DIR}/package_config.cmake.in)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_BINARY_DIR}/package_config.cmake)

include(CPack)
