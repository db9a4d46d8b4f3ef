# The Debian packages (CPack), one per install component: `cpack --config CPackConfig.cmake` in a
# build configured with -DCMAKE_INSTALL_PREFIX=/usr gives (tools/dev.sh package does both)
#   jetagent_<version>_<arch>.deb           the core: everything installed without a COMPONENT
#                                           (CMake's "Unspecified"): the binary, the service, its
#                                           config and maintainer scripts, models and docs;
#   jetagent-opencv_<version>_<arch>.deb    the plugins of the component opencv (plugins/): the
#                                           OpenCV DNN backend and the window;
#   jetagent-tensorrt_<version>_<arch>.deb  the TensorRT backend, only where it is built (a Jetson).
# A plugin package depends on the core of its own version: plugins are refused by any other.
# Natively, dpkg-shlibdeps derives each package's Depends from its own binaries. A cross build
# cannot run it on the target's libraries, so Depends comes from each package's binaries' NEEDED
# entries through the Debian 12 table below; JetPack (Ubuntu) packages are best built natively on
# the board, where shlibdeps names Ubuntu's packages.

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
set(CPACK_PACKAGE_CONTACT "${JETAGENT_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${JETAGENT_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE "${_deb_arch}")

# One package per component: the core (Unspecified) and every component a plugin was installed
# in (plugins/CMakeLists.txt records them), so jetagent-tensorrt exists only where that plugin is
# built. Settings below are per component (CPACK_DEBIAN_<COMPONENT>_...): CPack would apply a
# package-wide Depends, Recommends or maintainer script to every package.
get_property(_plugin_components GLOBAL PROPERTY JETAGENT_PLUGIN_COMPONENTS)
list(REMOVE_DUPLICATES _plugin_components)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING IGNORE)
set(CPACK_COMPONENTS_ALL Unspecified ${_plugin_components})
# The package-wide summary stays CPack's default, which it does not prepend to a component's own
# description: each description below starts with its package's summary line.
set(CPACK_DEBIAN_UNSPECIFIED_PACKAGE_NAME jetagent)
set(CPACK_DEBIAN_UNSPECIFIED_DESCRIPTION
    "per-frame latency and energy of vision inference on NVIDIA Jetson
jetagent reads frames from cameras and video, runs classification and action recognition \
models on them, and logs per-frame latency and energy. It runs as a systemd service \
(jetagent.service, not enabled on install), as a live camera demo, or as a field power tool. \
This is the core: the CPU engine (XNNPACK), the GStreamer and V4L2 sources and the live view. \
The OpenCV DNN backend and the window (--display) are in jetagent-opencv, rtsp:// outputs in \
jetagent-rtsp, the TensorRT backend in jetagent-tensorrt (built on a Jetson).")
set(CPACK_DEBIAN_OPENCV_DESCRIPTION
    "OpenCV plugins for jetagent: the OpenCV DNN backend and the window
Plugins that jetagent loads only when a run asks for them: the engine backend 'opencv' \
(inference through OpenCV's DNN module), and the window (--display) with video file \
recordings (display.output), through OpenCV's highgui and videoio. Without this package the \
core runs headless and reports which package a run that needs them lacks.")
set(CPACK_DEBIAN_RTSP_DESCRIPTION
    "RTSP server plugin for jetagent: rtsp:// video outputs
The plugin that serves jetagent's annotated video over RTSP (display.output rtsp://@:PORT/PATH), \
through gst-rtsp-server. jetagent loads it only when a run asks for an rtsp:// output. It is a \
package of its own because gst-rtsp-server depends on gstreamer1.0-plugins-bad, and through it \
on GTK and FFmpeg's libavcodec, which the core does not need; rtp:// outputs need only the core.")
set(CPACK_DEBIAN_TENSORRT_DESCRIPTION
    "TensorRT plugin for jetagent: the engine backend 'tensorrt'
Inference through TensorRT on a Jetson's GPU and DLA. jetagent loads it only when a run asks \
for it, so that a CPU-only run never maps libnvinfer and CUDA.")
set(_plugin_packages "")
foreach(_component IN LISTS _plugin_components)
    string(TOUPPER "${_component}" _upper)
    if(NOT DEFINED CPACK_DEBIAN_${_upper}_DESCRIPTION)
        message(FATAL_ERROR "jetagent: plugins are installed in the component '${_component}', "
            "which has no package description: set CPACK_DEBIAN_${_upper}_DESCRIPTION in "
            "systemd/package.cmake")
    endif()
    set(CPACK_DEBIAN_${_upper}_PACKAGE_NAME jetagent-${_component})
    set(CPACK_DEBIAN_${_upper}_PACKAGE_DEPENDS "jetagent (= ${PROJECT_VERSION})")
    list(APPEND _plugin_packages jetagent-${_component})
endforeach()
string(REPLACE ";" ", " CPACK_DEBIAN_UNSPECIFIED_PACKAGE_SUGGESTS "${_plugin_packages}")

# The core's Depends must not reach Qt, X11, GDAL, FFmpeg or OpenCV's GUI, codec and DNN modules
# (systemd/check-deb.sh and test-deb-install.sh check it; the one exception is what OpenCV's core
# brings itself: Debian 12's libopencv-core depends on libglx0, so on X11's client libraries), so
# what pulls them in is recommended at most. Video files and the rtsp:// and csi:// sources are decoded by GStreamer
# (hal/video_file_source.cpp, hal/gstreamer_source.cpp): the pipeline's own elements (decodebin,
# videoconvert, appsink) are in gstreamer1.0-plugins-base, whose Theora plugin reaches X11's
# client libraries (libtheora0 depends on libcairo2); the containers (AVI, MP4, Matroska) and
# MJPEG are in -good (X11 too), H.264, H.265 and MPEG-4 decoders in -libav (FFmpeg's libavcodec).
# A missing element is an error naming the package. The network video outputs (--output rtp://,
# rtsp://) need RTP payloading and UDP (-good) and an H.264 encoder: x264enc (-ugly) or
# openh264enc (-bad); a Jetson has its own (nvv4l2h264enc).
set(CPACK_DEBIAN_UNSPECIFIED_PACKAGE_RECOMMENDS
    "systemd, gstreamer1.0-plugins-base, gstreamer1.0-plugins-good, gstreamer1.0-libav, gstreamer1.0-plugins-ugly | gstreamer1.0-plugins-bad")
# What the binary needs beside its shared libraries: the HTML reports inline Debian's Chart.js
# (src/app/html_report.h). dpkg-shlibdeps' Depends is added to these (and the cross build's, in
# package_config.cmake).
set(JETAGENT_DEB_EXTRA_DEPENDS libjs-chart.js)
string(REPLACE ";" ", " CPACK_DEBIAN_UNSPECIFIED_PACKAGE_DEPENDS "${JETAGENT_DEB_EXTRA_DEPENDS}")

# The shared libraries the packages' binaries may link, by soname, and their Debian 12 packages:
# the cross build's Depends. A NEEDED entry missing here stops cpack (package_config.cmake).
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
    "libmosquitto.so.1=libmosquitto1" # MQTT telemetry (the mqtt plugin)
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
    "libdnnl.so.2=libdnnl2" # oneDNN: x86-64 builds only
    "libgomp.so.1=libgomp1"
    "libm.so.6=libc6"
    "libc.so.6=libc6"
    "ld-linux-aarch64.so.1=libc6" # named by shared objects that use thread-local storage
    "ld-linux-x86-64.so.2=libc6")
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
# The core's only: a plugin package has no files of its own to configure or clean up.
set(CPACK_DEBIAN_UNSPECIFIED_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles
    ${CMAKE_CURRENT_BINARY_DIR}/debian/postinst
    ${CMAKE_CURRENT_BINARY_DIR}/debian/prerm
    ${CMAKE_CURRENT_BINARY_DIR}/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Debug information stays in the build tree: the packages ship stripped binaries.
set(CPACK_STRIP_FILES ON)

# Checks and settings that need cpack's own run (read there, not at configure time). A cross
# build's Depends come from each package's own binaries, "COMPONENT=FILE" (file(GENERATE) fills
# in the paths).
set(JETAGENT_PACKAGE_CROSS "${CMAKE_CROSSCOMPILING}")
set(JETAGENT_PACKAGE_BINARIES "Unspecified=$<TARGET_FILE:jetagent>")
foreach(_component IN ITEMS Unspecified LISTS _plugin_components)
    get_property(_targets GLOBAL PROPERTY JETAGENT_PLUGIN_TARGETS_${_component})
    foreach(_target IN LISTS _targets)
        list(APPEND JETAGENT_PACKAGE_BINARIES "${_component}=$<TARGET_FILE:${_target}>")
    endforeach()
endforeach()
jetagent_configure_file(package_config.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/package_config.cmake.in)
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/package_config.cmake
    INPUT ${CMAKE_CURRENT_BINARY_DIR}/package_config.cmake.in)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_BINARY_DIR}/package_config.cmake)

include(CPack)
