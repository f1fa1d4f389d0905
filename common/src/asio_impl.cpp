// Compiles Asio and Beast once for the whole project (BOOST_*_SEPARATE_COMPILATION).
#include <utility>

#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
