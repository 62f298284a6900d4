
/**
 * @file constants.hpp
 * @author João Azevedo joao.azevedo@inesctec.pt
 *
 * @copyright Copyright (c) 2020-2022 INESC TEC.
 *
 */

#ifndef CACHE_CONSTANTS_HPP
#define CACHE_CONSTANTS_HPP

/**
 * @brief Specifies one Kilobyte in bytes;
 *
 */
#define One_Kilobyte 1024

/**
 * @brief Specifies one Megabyte in bytes;
 *
 */
#define One_Megabyte 1048576

/**
 * @brief Specifies one Gigabyte in bytes;
 *
 */
#define One_Gigabyte 1073741824

#endif // CACHE_CONSTANTS_HPP